import { describe, expect, it } from "vitest";
import { GatewayError } from "../core/errors.js";
import { toGatewayError } from "./surfaces.js";

describe("toGatewayError on a busy store", () => {
  it("answers PostgreSQL's pool out of connections as a retryable 503, not a 500", () => {
    for (const thrown of [
      new Error("timeout exceeded when trying to connect"),
      new GatewayError("GW_ERR_INTERNAL", undefined, { cause: new Error("timeout exceeded when trying to connect") }),
    ]) {
      const answer = toGatewayError(thrown);
      expect(answer.errorName).toBe("GW_ERR_BUSY");
      expect(answer.status).toBe(503);
      expect(answer.headers["retry-after"]).toBe("1");
    }
  });

  it("still answers an unknown failure as a 500", () => {
    expect(toGatewayError(new Error("something else")).status).toBe(500);
  });
});
