import { createHash } from "node:crypto";
import type { PyValue } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Database, type DbRoot, freezeDatabase } from "./database.js";

describe("Database tables named like Object's members", () => {
  // Own properties, as a parsed file gives them: `__proto__` and `constructor` are table names here.
  const pristine = freezeDatabase(
    Object.fromEntries([
      ["__proto__", new Map<string, PyValue>([["k", 1n]])],
      ["constructor", new Map<string, PyValue>()],
    ]) as DbRoot,
  );
  const open = (): Database<DbRoot> => Database.open("OddDB", z.custom<DbRoot>(), pristine);

  it("keep `__proto__` and `constructor` as tables", () => {
    const db = open();
    expect(Object.keys(db.tables)).toEqual(["__proto__", "constructor"]);
    expect(db.table("__proto__").get("k")).toBe(1n);
    expect(db.table("constructor").size).toBe(0);
  });

  it("hash both tables, as json.dumps(sort_keys=True) writes them", () => {
    const text = '{"__proto__": {"k": 1}, "constructor": {}}';
    expect(open().hash()).toBe(createHash("sha256").update(text).digest("hex"));
  });

  it("take no inherited name for a table", () => {
    const db = open();
    for (const name of ["toString", "hasOwnProperty", "valueOf"]) {
      expect(() => db.table(name)).toThrow(`AttributeError: 'OddDB' object has no attribute '${name}'`);
    }
    expect("toString" in db.tables).toBe(false);
  });
});
