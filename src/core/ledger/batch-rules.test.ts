import { describe, expect, it } from "vitest";
import { type BatchedMove, batchesByReference, rowMoves, usersToRunAlone } from "./batch-rules.js";

const move = (reference: string, userId: number, tokenId: number | null, take: number, give = 0): BatchedMove => ({
  reference,
  userId,
  tokenId,
  take,
  give,
});

describe("batch rules", () => {
  it("cuts a batch where a reference comes back, keeping the order asked", () => {
    const refs = ["a", "b", "a", "c", "b", "b"].map((reference, i) => ({ reference, i }));
    expect(batchesByReference(refs).map((part) => part.map((x) => x.i))).toEqual([[0, 1], [2, 3, 4], [5]]);
    expect(batchesByReference([])).toEqual([]);
  });

  it("sums each user's and each token's takes and give-backs", () => {
    const sums = rowMoves([move("a", 1, 10, 30), move("b", 1, 10, 20), move("c", 1, null, 0, 5), move("d", 2, 20, 0)]);
    expect(sums).toEqual({
      users: [{ id: 1, take: 50, give: 5 }],
      tokens: [{ id: 10, take: 50, give: 0 }],
    });
  });

  it("runs alone the users whose sum or whose token's sum did not fit, and those sharing a token with them", () => {
    const moves = [move("a", 1, 10, 30), move("b", 2, 20, 30), move("c", 3, 30, 30), move("d", 4, 30, 30)];
    expect(usersToRunAlone(moves, { users: new Set([1, 2, 3, 4]), tokens: new Set([10, 20, 30]) })).toEqual(new Set());
    expect(usersToRunAlone(moves, { users: new Set([2, 3, 4]), tokens: new Set([10, 20, 30]) })).toEqual(new Set([1]));
    expect(usersToRunAlone(moves, { users: new Set([1, 2, 3, 4]), tokens: new Set([10, 30]) })).toEqual(new Set([2]));
    // Users 3 and 4 share token 30: when one of them runs alone, so does the other.
    expect(usersToRunAlone(moves, { users: new Set([1, 2, 4]), tokens: new Set([10, 20, 30]) })).toEqual(
      new Set([3, 4]),
    );
  });
});
