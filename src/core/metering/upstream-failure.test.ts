import { describe, expect, it } from "vitest";
import { UpstreamError } from "../upstream-error.js";
import { clientErrorFor } from "./upstream-failure.js";

describe("upstream failures", () => {
  it("maps upstream failures to the status a client of Google's API expects", () => {
    const status = (kind: "retryable" | "refused" | "auth", s: number | null) =>
      clientErrorFor(new UpstreamError(kind, "x", { status: s })).status;
    expect(status("retryable", 429)).toBe(429);
    expect(status("retryable", 503)).toBe(503);
    expect(status("retryable", 500)).toBe(500);
    expect(status("retryable", 502)).toBe(502);
    expect(status("retryable", null)).toBe(502);
    expect(status("auth", 400)).toBe(503);
    expect(status("auth", 403)).toBe(503);
    expect(status("refused", 400)).toBe(400);
    expect(status("refused", 404)).toBe(404);
    expect(status("refused", 413)).toBe(400);
  });

  it("never passes on the gateway's own message naming the upstream address", () => {
    const err = clientErrorFor(new UpstreamError("retryable", "upstream unreachable (http://10.0.0.5:9000/v1beta)"));
    expect(err.message).not.toContain("10.0.0.5");
  });
});
