import { describe, expect, it } from "vitest";
import { decideInOrder, type TokenRoom, type UserRoom } from "./in-order.js";

const rooms = (quota: number, creditLine: number, limit: number | null) => ({
  users: new Map<number, UserRoom>([[1, { quota, creditLine }]]),
  tokens: new Map<number, TokenRoom>([[9, { limit, used: 0 }]]),
});

describe("operations decided in the order asked", () => {
  it("takes each hold while it fits and refuses the ones after, a smaller one still fitting later", () => {
    const { users, tokens } = rooms(100, 20, null);
    const hold = (amount: number) => ({ kind: "hold" as const, userId: 1, tokenId: 9, amount });
    const outcomes = decideInOrder([hold(50), hold(80), hold(50), hold(20), hold(1)], users, tokens);
    expect(outcomes.map((o) => (o.kind === "hold" ? o.refusedBy : o.kind))).toEqual([null, "user", null, null, "user"]);
    expect(users.get(1)?.quota).toBe(-20);
    expect(tokens.get(9)?.used).toBe(120);
  });

  it("refuses a hold on the token's limit, and on a token that has no row", () => {
    const { users, tokens } = rooms(1_000, 0, 70);
    const outcomes = decideInOrder(
      [
        { kind: "hold", userId: 1, tokenId: 9, amount: 50 },
        { kind: "hold", userId: 1, tokenId: 9, amount: 30 },
        { kind: "hold", userId: 1, tokenId: 8, amount: 1 },
        { kind: "hold", userId: 2, tokenId: null, amount: 1 },
      ],
      users,
      tokens,
    );
    expect(outcomes.map((o) => (o.kind === "hold" ? o.refusedBy : o.kind))).toEqual([null, "token", "token", "user"]);
    expect(users.get(1)?.quota).toBe(950);
  });

  it("gives back before a later settlement collects its excess, and records what the line did not allow", () => {
    const { users, tokens } = rooms(0, 10, null);
    const charge = (held: number) => ({ userId: 1, tokenId: 9, held });
    const outcomes = decideInOrder(
      [
        { kind: "settle", charge: charge(10), actual: 40 },
        { kind: "refund", charge: charge(25) },
        { kind: "settle", charge: charge(10), actual: 40 },
        { kind: "not-open" },
      ],
      users,
      tokens,
    );
    expect(outcomes).toEqual([
      { kind: "closing", row: { kind: "settle", userId: 1, tokenId: 9, amount: -10 }, uncollected: 20 },
      { kind: "closing", row: { kind: "refund", userId: 1, tokenId: 9, amount: 25 }, uncollected: 0 },
      { kind: "closing", row: { kind: "settle", userId: 1, tokenId: 9, amount: -25 }, uncollected: 5 },
      { kind: "not-open" },
    ]);
    expect(users.get(1)?.quota).toBe(-10);
  });
});
