import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { arrayLiteral, fixedStatement, PreparingClient } from "../../src/store/postgres/fixed-statement.js";
import { createTestDatabase, HAS_PG } from "../support/postgres.js";

/** Texts an array literal must carry unchanged: quotes, backslashes, separators, the word NULL. */
const AWKWARD = ['say "hi"', "back\\slash", "a,b", "{braces}", "NULL", "", "  spaced  ", "ünï ✓", '\\"both'];

describe("array literals of fixed statements", () => {
  it("writes numbers bare, every string quoted and escaped, and null as NULL", () => {
    expect(arrayLiteral([1, -2, 9_007_199_254_740_991, null, 10n])).toBe("{1,-2,9007199254740991,NULL,10}");
    expect(arrayLiteral(["plain", 'say "hi"', "back\\slash", null])).toBe(
      '{"plain","say \\"hi\\"","back\\\\slash",NULL}',
    );
    expect(arrayLiteral([])).toBe("{}");
    expect(arrayLiteral([true, false])).toBe("{true,false}");
  });

  it("leaves to pg an array holding anything else", () => {
    expect(arrayLiteral([[1, 2]])).toBeNull();
    expect(arrayLiteral([new Date(0)])).toBeNull();
    expect(arrayLiteral([Buffer.from("x")])).toBeNull();
    expect(arrayLiteral([{ a: 1 }])).toBeNull();
  });
});

describe.skipIf(!HAS_PG)("array literals read back by PostgreSQL", () => {
  let client: pg.Client;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = new PreparingClient({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it("gives back every text, null and number as it was sent, through a fixed statement", async () => {
    const statement = fixedStatement<{ t: (string | null)[]; n: (string | null)[] }>(
      "select $1::text[] as t, $2::bigint[] as n",
    );
    const texts = [...AWKWARD, null];
    const numbers = [0, -1, 9_007_199_254_740_991, null];
    const res = await client.query(statement.text, [texts, numbers]);
    expect(res.rows[0].t).toEqual(texts);
    expect(res.rows[0].n).toEqual(["0", "-1", "9007199254740991", null]);
  });

  it("reads each literal as pg's own conversion of the same array", async () => {
    const plain = new pg.Client({ connectionString: db.url });
    await plain.connect();
    try {
      const mine = await client.query("select $1::text[] as t", [arrayLiteral(AWKWARD)]);
      const theirs = await plain.query("select $1::text[] as t", [AWKWARD]);
      expect(mine.rows[0].t).toEqual(theirs.rows[0].t);
      expect(mine.rows[0].t).toEqual(AWKWARD);
    } finally {
      await plain.end();
    }
  });
});
