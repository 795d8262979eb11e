import { describe, expect, it } from "vitest";
import { deadline } from "./deadline-signal.js";

describe("deadline", () => {
  it("aborts with a TimeoutError at its deadline, also as a source of AbortSignal.any", async () => {
    const own = deadline(20).signal;
    const combined = AbortSignal.any([new AbortController().signal, deadline(20).signal]);
    expect(own.aborted).toBe(false);
    const reason = await new Promise<unknown>((resolve) =>
      combined.addEventListener("abort", () => resolve(combined.reason)),
    );
    expect((reason as DOMException).name).toBe("TimeoutError");
    expect(own.aborted).toBe(true);
    expect((own.reason as DOMException).name).toBe("TimeoutError");
  });

  it("follows a caller's signal with its reason, and after clear neither fires", () => {
    const caller = new AbortController();
    const followed = deadline(60_000, caller.signal);
    caller.abort(new Error("client left"));
    expect(followed.signal.aborted).toBe(true);
    expect((followed.signal.reason as Error).message).toBe("client left");
    followed.clear();

    const other = new AbortController();
    const cleared = deadline(60_000, other.signal);
    cleared.clear();
    other.abort();
    expect(cleared.signal.aborted).toBe(false);
  });
});
