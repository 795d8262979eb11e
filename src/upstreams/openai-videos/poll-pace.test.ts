import { describe, expect, it } from "vitest";
import { PollPace } from "./poll-pace.js";

describe("the poll pace of a channel", () => {
  it("gives each channel its own evenly spaced moments, and refuses one further away than the wait allowed", async () => {
    const now = 1_000_000;
    const pace = new PollPace(() => now);
    // One poll a second: the first goes at once, the next would wait a second.
    expect(await pace.take(1, 1, 100)).toBe(true);
    expect(await pace.take(1, 1, 100)).toBe(false);
    expect(await pace.take(1, 1, 100)).toBe(false);
    // Another channel has its own pace.
    expect(await pace.take(2, 1, 100)).toBe(true);
  });

  it("lets polls through at the rate, each taking the next free moment", async () => {
    const now = 5_000;
    const pace = new PollPace(() => now);
    // 1000 a second: moments 1 ms apart, all within a 10 ms wait.
    const taken = await Promise.all(Array.from({ length: 5 }, () => pace.take(7, 1000, 10)));
    expect(taken).toEqual([true, true, true, true, true]);
    // The sixth moment is 5 ms away: refused under a 4 ms bound, taken under 10 ms.
    expect(await pace.take(7, 1000, 4)).toBe(false);
    expect(await pace.take(7, 1000, 10)).toBe(true);
  });
});
