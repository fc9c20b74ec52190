import { createHash } from "node:crypto";
import { parseRecord } from "@envace/protocol";
import { attributeError, dumpValue, jsonString, pyDeepCopy, type PyDict, type PyModel, type PyValue, sortCodePoints } from "@envace/python-text";
import type { z } from "zod";

/**
 * A τ² database root: named tables, each a dict of entities (orders, users, flights, …). Some
 * domains (telecom) hold lists and nested models instead; those fields are plain values that
 * each working copy copies whole and tools change in place.
 */
export type DbRoot = Record<string, Map<string, unknown>>;

export type Entity<M> = M extends Map<string, infer V> ? V : never;

/**
 * One environment's database. Loaded databases are frozen and shared: a working copy starts
 * with fresh tables that point at the frozen entities and copies an entity the first time a
 * tool changes it. Fresh environments therefore cost a few table copies, not a deep copy of
 * megabytes, and the hash of an unchanged entity is computed once.
 */
export class Database<T extends DbRoot> {
  private constructor(
    /** The upstream model class (`RetailDB`), which Python names in attribute errors. */
    readonly className: string,
    readonly schema: z.ZodType<T>,
    private tablesValue: T,
    /** The frozen database this copy started from, until `update` replaces everything. */
    private pristine: T | undefined,
  ) {}

  /** A working copy of a loaded (frozen) database. */
  static open<T extends DbRoot>(className: string, schema: z.ZodType<T>, pristine: T): Database<T> {
    return new Database(className, schema, shallowTables(pristine), pristine);
  }

  /**
   * `db.<name>` for code that may be handed another domain's database (upstream points the
   * user toolkit at the agent's database after initialisation data is applied).
   */
  table(name: string): Map<string, unknown> {
    // Own tables only: `constructor` or `toString` is no table, whatever the object's prototype.
    const table = Object.hasOwn(this.tablesValue, name) ? (this.tablesValue as DbRoot)[name] : undefined;
    if (table === undefined) throw attributeError(`'${this.className}' object has no attribute '${name}'`);
    return table;
  }

  /** The tables; entities may be frozen (shared) until `mutable` copies them. */
  get tables(): T {
    return this.tablesValue;
  }

  /**
   * The entity `key` of `table`, safe to change: copied on first write if it is shared.
   * Returns undefined when the key is absent.
   */
  mutable<K extends keyof T & string>(table: K, key: string): Entity<T[K]> | undefined {
    const map = this.tablesValue[table]!;
    const entity = map.get(key);
    if (entity === undefined || !isShared(entity)) return entity as Entity<T[K]> | undefined;
    const copy = pyDeepCopy(entity as PyValue);
    map.set(key, copy);
    return copy as Entity<T[K]>;
  }

  /** pydantic's `model_dump()` of the database (shares structure; do not change it). */
  dump(): PyModel {
    return this.tablesValue as unknown as PyModel;
  }

  /** τ²'s `get_db_hash()`: sha256 of `json.dumps(model_dump(), sort_keys=True, default=str)`. */
  hash(): string {
    // Databases that started from the same pristine one and changed the same entities the same
    // way have the same hash: remember it by the changes (a few kilobytes, not megabytes).
    const changes = this.changes();
    const known = changes === undefined ? undefined : hashesByChanges.get(this.pristine!)?.get(changes);
    if (known !== undefined) return known;
    const hash = this.fullHash();
    if (changes !== undefined) {
      let cache = hashesByChanges.get(this.pristine!);
      if (cache === undefined || cache.size >= 512) {
        cache = new Map<string, string>();
        hashesByChanges.set(this.pristine!, cache);
      }
      cache.set(changes, hash);
    }
    return hash;
  }

  /** Every entity that is not the pristine one, as text; undefined once `update` replaced the tables. */
  private changes(): string | undefined {
    if (this.pristine === undefined) return undefined;
    const parts: string[] = [];
    for (const [name, table] of Object.entries(this.tablesValue as DbRoot)) {
      // A plain field is copied whole, so it may have changed anywhere: no shortcut.
      if (!(table instanceof Map)) return undefined;
      const pristine = (this.pristine as DbRoot)[name];
      parts.push(`${jsonString(name)}:${table.size}`);
      for (const [key, entity] of table) {
        if (pristine?.get(key) !== entity) parts.push(`${jsonString(key)}=${sortedDump(entity as PyValue)}`);
      }
      for (const key of pristine?.keys() ?? []) {
        if (!table.has(key)) parts.push(`-${jsonString(key)}`);
      }
    }
    return parts.join("\n");
  }

  private fullHash(): string {
    const hash = createHash("sha256");
    const root = this.tablesValue as DbRoot;
    hash.update("{");
    sortCodePoints(Object.keys(root)).forEach((name, i) => {
      const table = root[name]!;
      if (!(table instanceof Map)) {
        hash.update(`${i > 0 ? ", " : ""}${jsonString(name)}: ${sortedDump(table)}`);
        return;
      }
      hash.update(`${i > 0 ? ", " : ""}${jsonString(name)}: {`);
      this.sortedKeys(name, table).forEach((key, j) => {
        hash.update(`${j > 0 ? ", " : ""}${jsonString(key)}: `);
        hash.update(sortedDump(table.get(key) as PyValue));
      });
      hash.update("}");
    });
    hash.update("}");
    return hash.digest("hex");
  }

  // Most tables keep the keys they were loaded with; their sorted order is computed once.
  private sortedKeys(name: string, table: Map<string, unknown>): string[] {
    const pristine = (this.pristine as DbRoot | undefined)?.[name];
    if (pristine?.size !== table.size || ![...table.keys()].every((key) => pristine.has(key))) {
      return sortCodePoints([...table.keys()]);
    }
    let keys = sortedTableKeys.get(pristine);
    if (keys === undefined) {
      keys = sortCodePoints([...pristine.keys()]);
      sortedTableKeys.set(pristine, keys);
    }
    return keys;
  }

  /**
   * τ²'s `update_db(data)`: merge `data` into the dump (dicts merge key by key, anything else
   * replaces) and validate the result as a new database.
   */
  update(data: PyDict): void {
    const merged = mergeInto(toDict(this.dump()), data);
    this.tablesValue = parseRecord(this.schema, merged, { file: `${this.className} updated with initialization data` });
    this.pristine = undefined;
  }
}

/** Freeze a loaded database so that any accidental in-place change throws. */
export function freezeDatabase<T extends DbRoot>(root: T): T {
  for (const table of Object.values(root)) {
    // Plain fields are copied whole by every working copy, and stay unfrozen for tools to change.
    if (table instanceof Map) for (const entity of table.values()) deepFreeze(entity);
  }
  return root;
}

function shallowTables<T extends DbRoot>(root: T): T {
  // No prototype: a table named `__proto__` is a table, and no inherited name reads as one.
  const tables = Object.create(null) as Record<string, unknown>;
  for (const [name, table] of Object.entries(root)) tables[name] = table instanceof Map ? new Map(table) : pyDeepCopy(table as PyValue);
  return tables as T;
}

function isShared(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.isFrozen(value);
}

function refuse(): never {
  throw new TypeError("shared database entity changed in place; take it through Database.mutable first");
}

function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  if (value instanceof Map) {
    for (const item of value.values()) deepFreeze(item);
    Object.defineProperties(value, { set: { value: refuse }, delete: { value: refuse }, clear: { value: refuse } });
  } else {
    for (const item of Object.values(value)) deepFreeze(item);
  }
  Object.freeze(value);
}

const fragments = new WeakMap<object, string>();
const sortedTableKeys = new WeakMap<Map<string, unknown>, string[]>();
const hashesByChanges = new WeakMap<DbRoot, Map<string, string>>();

/** `json.dumps(value, sort_keys=True)`, reusing the text of shared (frozen) entities. */
export function sortedDump(value: PyValue): string {
  if (typeof value !== "object" || value === null) return dumpValue(value, true);
  if (!Object.isFrozen(value)) return dumpValue(value, true, sortedDump);
  let text = fragments.get(value);
  if (text === undefined) {
    text = dumpValue(value, true);
    fragments.set(value, text);
  }
  return text;
}

/** A model dump as nested dicts, as `AddictDict(model.model_dump())` sees it. */
function toDict(value: PyValue): PyValue {
  if (Array.isArray(value)) return value.map(toDict);
  if (value instanceof Map || (typeof value === "object" && value !== null)) {
    const dict: PyDict = new Map();
    const entries = value instanceof Map ? value.entries() : Object.entries(value);
    for (const [key, item] of entries) dict.set(key, toDict(item));
    return dict;
  }
  return value;
}

// addict's recursive update: dict into dict merges, anything else replaces (new keys go last).
function mergeInto(base: PyValue, update: PyDict): PyValue {
  if (!(base instanceof Map)) return update;
  for (const [key, value] of update) {
    const current = base.get(key);
    if (current instanceof Map && value instanceof Map) mergeInto(current, value);
    else base.set(key, value instanceof Map ? toDict(value) : value);
  }
  return base;
}
