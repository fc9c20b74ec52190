import { typeError } from "./errors.js";
import type { PyObject } from "./value.js";

// The Python types beyond what JSON produces: tuples, sets, dicts whose keys are any hashable
// value, and objects known only by their type name and repr. Each is a class, so a value's
// Python type is told by `instanceof`.

/** A Python `tuple`: never equal to a list, hashable when its items are. */
export class PyTuple {
  constructor(readonly items: readonly PyObject[]) {}
}

/**
 * An object of a type the model does not spell out (an `mpf`, a `Decimal`, `Ellipsis`, an
 * instance of some class), known by its type name and `repr`. Never JSON-serialisable.
 */
export class PyOpaque {
  private text: string | (() => string);

  constructor(
    readonly typeName: string,
    /** Its `repr`, or a function that computes it when first asked (some are costly and rarely needed). */
    repr: string | (() => string),
    /** Its `==`; by default equal only to an opaque value of the same type and repr. */
    readonly equals?: (other: PyObject) => boolean,
  ) {
    this.text = repr;
  }

  get repr(): string {
    if (typeof this.text !== "string") this.text = this.text();
    return this.text;
  }
}

/**
 * How a dict or a set files a hashable value: a `str` as itself; `bool`, `int` and integral
 * `float` as the `bigint` they equal (so `1`, `1.0` and `True` are one key, as in Python); other
 * floats as themselves; `None` as `null`; tuples and opaque objects as a symbol of their
 * contents. A JavaScript `Map` keyed by these holds exactly Python's keys.
 */
export type HashKey = string | bigint | number | null | symbol;

/**
 * The `HashKey` of a value; `TypeError: unhashable type` for lists, dicts and sets, as Python
 * raises it.
 */
export function hashKey(value: PyObject): HashKey {
  switch (typeof value) {
    case "string":
    case "bigint":
      return value;
    case "boolean":
      return value ? 1n : 0n;
    case "number":
      return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (value === null) return null;
  if (value instanceof PyTuple || value instanceof PyOpaque) return Symbol.for(keyText(value));
  throw typeError(`unhashable type: '${unhashableName(value)}'`);
}

/** An unambiguous text of a hashable value, for the symbol that files a tuple. */
function keyText(value: PyObject): string {
  if (value instanceof PyTuple) return `(${value.items.map(keyText).join(",")})`;
  if (value instanceof PyOpaque) return `<${JSON.stringify(value.typeName)} ${JSON.stringify(value.repr)}>`;
  const key = hashKey(value);
  switch (typeof key) {
    case "string":
      return JSON.stringify(key);
    case "bigint":
      return `${key}n`;
    case "number":
      return String(key);
    default:
      return key === null ? "None" : key.description!;
  }
}

function unhashableName(value: PyObject): string {
  if (Array.isArray(value)) return "list";
  if (value instanceof PySet) return "set";
  return "dict";
}

/**
 * A Python `dict` whose keys may be any hashable value (`{1: 'a', (2, 3): 'b', None: 'c'}`),
 * in insertion order. A dict that only ever has `str` keys can be a plain `Map` (`PyDict`);
 * this is the dict for code that may be handed other keys, as Python code is.
 */
export class PyHashDict implements Iterable<[PyObject, PyObject]> {
  private readonly map = new Map<HashKey, PyObject>();
  /** The key objects that differ from their `HashKey` (`True`, `1.0`, tuples), by hash key. */
  private originals: Map<HashKey, PyObject> | undefined;

  constructor(entries?: Iterable<readonly [PyObject, PyObject]>) {
    if (entries) for (const [key, value] of entries) this.set(key, value);
  }

  /** A dict with string keys from a plain record, in its key order. */
  static of(record: Readonly<Record<string, PyObject>>): PyHashDict {
    const dict = new PyHashDict();
    for (const key of Object.keys(record)) dict.map.set(key, record[key]!);
    return dict;
  }

  get size(): number {
    return this.map.size;
  }

  /** `key in dict`. */
  has(key: PyObject): boolean {
    return this.map.has(typeof key === "string" ? key : hashKey(key));
  }

  /** `dict.get(key)`: undefined when absent. */
  get(key: PyObject): PyObject | undefined {
    return this.map.get(typeof key === "string" ? key : hashKey(key));
  }

  /** `dict[key] = value`; a key already present keeps its first key object and its position, as in Python. */
  set(key: PyObject, value: PyObject): void {
    if (typeof key === "string") {
      this.map.set(key, value);
      return;
    }
    const hash = hashKey(key);
    if (hash !== key && !this.map.has(hash)) (this.originals ??= new Map()).set(hash, key);
    this.map.set(hash, value);
  }

  /** `del dict[key]`; whether it was there. */
  delete(key: PyObject): boolean {
    const hash = typeof key === "string" ? key : hashKey(key);
    this.originals?.delete(hash);
    return this.map.delete(hash);
  }

  keys(): PyObject[] {
    const originals = this.originals;
    const keys = [...this.map.keys()] as PyObject[];
    if (originals === undefined) return keys;
    return keys.map((hash) => (originals.has(hash as HashKey) ? originals.get(hash as HashKey)! : hash));
  }

  values(): PyObject[] {
    return [...this.map.values()];
  }

  /** `(key, value)` pairs in insertion order. */
  entries(): IterableIterator<[PyObject, PyObject]> {
    const originals = this.originals;
    // Without originals every hash key is its own key object (a str, an int, a float, None).
    if (originals === undefined) return this.map.entries() as IterableIterator<[PyObject, PyObject]>;
    return restoreKeys(this.map.entries(), originals);
  }

  [Symbol.iterator](): IterableIterator<[PyObject, PyObject]> {
    return this.entries();
  }

  /** `dict.copy()`: a shallow copy. */
  copy(): PyHashDict {
    const copy = new PyHashDict();
    for (const [hash, value] of this.map) copy.map.set(hash, value);
    if (this.originals) copy.originals = new Map(this.originals);
    return copy;
  }
}

function* restoreKeys(entries: IterableIterator<[HashKey, PyObject]>, originals: ReadonlyMap<HashKey, PyObject>): IterableIterator<[PyObject, PyObject]> {
  for (const [hash, value] of entries) yield [originals.has(hash) ? originals.get(hash)! : (hash as PyObject), value];
}

/** A Python `set` of hashable values, iterated in insertion order (CPython's order differs; nothing here depends on it). */
export class PySet implements Iterable<PyObject> {
  private readonly members = new Map<HashKey, PyObject>();

  constructor(items?: Iterable<PyObject>) {
    if (items) for (const item of items) this.add(item);
  }

  get size(): number {
    return this.members.size;
  }

  /** `item in set`. */
  has(item: PyObject): boolean {
    return this.members.has(hashKey(item));
  }

  /** `set.add(item)`: an equal member already there stays. */
  add(item: PyObject): void {
    const hash = hashKey(item);
    if (!this.members.has(hash)) this.members.set(hash, item);
  }

  /** `set.discard(item)`; whether it was there. */
  delete(item: PyObject): boolean {
    return this.members.delete(hashKey(item));
  }

  [Symbol.iterator](): IterableIterator<PyObject> {
    return this.members.values();
  }
}
