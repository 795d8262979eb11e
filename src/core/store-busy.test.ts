import { describe, expect, it } from "vitest";
import { isStoreBusy } from "./store-busy.js";

describe("isStoreBusy", () => {
  it("knows SQLite's locked database by name and by number", () => {
    expect(isStoreBusy(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }))).toBe(true);
    expect(isStoreBusy(Object.assign(new Error("database is locked"), { errcode: 5 | (3 << 8) }))).toBe(true);
  });

  it("knows PostgreSQL's pool out of connections, and the server refusing for a while", () => {
    expect(isStoreBusy(new Error("timeout exceeded when trying to connect"))).toBe(true);
    expect(isStoreBusy(new Error("Connection terminated due to connection timeout"))).toBe(true);
    expect(isStoreBusy(Object.assign(new Error("sorry, too many clients already"), { code: "53300" }))).toBe(true);
    expect(isStoreBusy(Object.assign(new Error("the database system is starting up"), { code: "57P03" }))).toBe(true);
    expect(isStoreBusy(new Error("wrapped", { cause: new Error("timeout exceeded when trying to connect") }))).toBe(
      true,
    );
  });

  it("leaves other failures alone", () => {
    expect(isStoreBusy(new Error('relation "tasks" does not exist'))).toBe(false);
    expect(isStoreBusy(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    // The pool's words with a code of their own are another error.
    expect(isStoreBusy(Object.assign(new Error("timeout exceeded when trying to connect"), { code: "X" }))).toBe(false);
    expect(isStoreBusy(undefined)).toBe(false);
  });
});
