import { describe, expect, it } from "vitest";
import { seededRandom } from "../simulator/server.js";
import { orderChannels } from "./channel-selection.js";

const ch = (id: number, priority: number, weight: number) => ({ id, priority, weight });

describe("channel selection", () => {
  it("always tries the highest priority tier first", () => {
    const random = seededRandom(7);
    for (let i = 0; i < 200; i++) {
      const order = orderChannels([ch(1, 0, 100), ch(2, 10, 1), ch(3, 5, 50), ch(4, 10, 1)], random);
      expect(new Set(order.slice(0, 2).map((c) => c.id))).toEqual(new Set([2, 4]));
      expect(order[2]?.id).toBe(3);
      expect(order[3]?.id).toBe(1);
    }
  });

  it("picks within a tier in proportion to weight", () => {
    const random = seededRandom(42);
    const counts = new Map<number, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const first = orderChannels([ch(1, 0, 1), ch(2, 0, 3), ch(3, 0, 6)], random)[0]!;
      counts.set(first.id, (counts.get(first.id) ?? 0) + 1);
    }
    // Expected shares 10%, 30%, 60%; allow 1.5 percentage points.
    expect(Math.abs((counts.get(1) ?? 0) / n - 0.1)).toBeLessThan(0.015);
    expect(Math.abs((counts.get(2) ?? 0) / n - 0.3)).toBeLessThan(0.015);
    expect(Math.abs((counts.get(3) ?? 0) / n - 0.6)).toBeLessThan(0.015);
  });

  it("lists every candidate once, weight-zero channels last in their tier", () => {
    const random = seededRandom(3);
    for (let i = 0; i < 100; i++) {
      const order = orderChannels([ch(1, 0, 0), ch(2, 0, 5), ch(3, 0, 1)], random);
      expect(order.map((c) => c.id).sort()).toEqual([1, 2, 3]);
      expect(order[2]?.id).toBe(1);
    }
  });
});
