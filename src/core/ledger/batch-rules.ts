/**
 * How many holds and closings, asked for at the same moment, are carried out together with one
 * statement per kind and still come out exactly as if each had run alone, in the order asked.
 *
 * A batch is cut wherever a reference comes back (a charge and its settlement, asked in one turn,
 * stay in that order). Within a batch, every user's takes (the holds, and the excess of the
 * settlements above their hold) are summed and taken in one conditional move against the balance
 * as it was before the batch's give-backs (refunds, settlements within the hold); the same on each
 * token. If the sum fits, every order of those operations alone would have taken every amount in
 * full (give-backs only add room), so each one's outcome is known. If it does not fit, the user's
 * operations of the batch are run one by one in the order asked instead.
 */

/** One operation of a batch, as the rules see it. */
export interface BatchedMove {
  /** The charge's reference: at most once per batch. */
  reference: string;
  userId: number;
  tokenId: number | null;
  /** Taken from the balance (and counted on the token) only if the whole sum fits. */
  take: number;
  /** Given back to the balance (and off the token) unconditionally. */
  give: number;
}

/** Splits operations, in the order asked, where a reference comes back. */
export function batchesByReference<T extends { reference: string }>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.reference)) {
      out.push(current);
      current = [];
      seen = new Set();
    }
    seen.add(item.reference);
    current.push(item);
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** The sum of the moves of one row (a user or a token): what to take if it fits, what to give. */
export interface RowMove {
  id: number;
  take: number;
  give: number;
}

/** Sums the moves per user and per token (a token without a move is left out). */
export function rowMoves(moves: readonly BatchedMove[]): { users: RowMove[]; tokens: RowMove[] } {
  const users = new Map<number, RowMove>();
  const tokens = new Map<number, RowMove>();
  const add = (map: Map<number, RowMove>, id: number, m: BatchedMove) => {
    const row = map.get(id) ?? { id, take: 0, give: 0 };
    row.take += m.take;
    row.give += m.give;
    map.set(id, row);
  };
  for (const m of moves) {
    if (m.take === 0 && m.give === 0) continue;
    add(users, m.userId, m);
    if (m.tokenId !== null) add(tokens, m.tokenId, m);
  }
  const byId = (a: RowMove, b: RowMove) => a.id - b.id;
  return { users: [...users.values()].sort(byId), tokens: [...tokens.values()].sort(byId) };
}

/**
 * The users whose operations must run one by one: those whose row (or one of whose tokens) did
 * not take its sum, and every user sharing a token with one of them.
 */
export function usersToRunAlone(
  moves: readonly BatchedMove[],
  moved: { users: ReadonlySet<number>; tokens: ReadonlySet<number> },
): Set<number> {
  const { users, tokens } = rowMoves(moves);
  const failedTokens = new Set(tokens.filter((t) => !moved.tokens.has(t.id)).map((t) => t.id));
  const alone = new Set(users.filter((u) => !moved.users.has(u.id)).map((u) => u.id));
  for (const m of moves) if (m.tokenId !== null && failedTokens.has(m.tokenId)) alone.add(m.userId);
  // A token moved by two users ties them: if one runs alone, so does the other.
  const tokenUsers = new Map<number, Set<number>>();
  for (const m of moves) {
    if (m.tokenId === null) continue;
    const set = tokenUsers.get(m.tokenId) ?? new Set<number>();
    set.add(m.userId);
    tokenUsers.set(m.tokenId, set);
  }
  let grew = true;
  while (grew) {
    grew = false;
    for (const set of tokenUsers.values()) {
      if (set.size > 1 && [...set].some((u) => alone.has(u)) && [...set].some((u) => !alone.has(u))) {
        for (const u of set) alone.add(u);
        grew = true;
      }
    }
  }
  return alone;
}
