import { describe, expect, it } from "vitest";
import { deadlineSignal } from "./deadline-signal.js";

describe("deadlineSignal", () => {
  it("aborts with a TimeoutError at its deadline, also as a source of AbortSignal.any", async () => {
    const own = deadlineSignal(20);
    const combined = AbortSignal.any([new AbortController().signal, deadlineSignal(20)]);
    expect(own.aborted).toBe(false);
    const reason = await new Promise<unknown>((resolve) =>
      combined.addEventListener("abort", () => resolve(combined.reason)),
    );
    expect((reason as DOMException).name).toBe("TimeoutError");
    expect(own.aborted).toBe(true);
    expect((own.reason as DOMException).name).toBe("TimeoutError");
  });
});
