import { afterEach, describe, expect, it, vi } from "vitest";
import { newTaskId } from "./ids.js";

describe("task ids", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("are the prefix and 32 base62 characters", () => {
    expect(newTaskId()).toMatch(/^task_[0-9A-Za-z]{32}$/);
    expect(newTaskId("vid")).toMatch(/^vid_[0-9A-Za-z]{32}$/);
  });

  it("sort in the order they were made when made in different milliseconds", () => {
    vi.useFakeTimers();
    const start = Date.UTC(2026, 0, 1);
    const steps = [0, 1, 2, 61, 62, 63, 3843, 3844, 86_400_000, 365 * 86_400_000];
    const ids = steps.map((step) => {
      vi.setSystemTime(start + step);
      return newTaskId();
    });
    expect([...ids].sort()).toEqual(ids);
  });

  it("differ within one millisecond: the random part is never shared", () => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.UTC(2026, 0, 1));
    const ids = Array.from({ length: 2000 }, () => newTaskId());
    expect(new Set(ids).size).toBe(ids.length);
    const time = ids[0]?.slice(5, 13);
    for (const id of ids) expect(id.slice(5, 13)).toBe(time);
    // 24 random characters: across 2,000 ids nearly every character shows up at each place.
    for (let i = 13; i < 37; i++) expect(new Set(ids.map((id) => id[i])).size).toBeGreaterThan(50);
  });
});
