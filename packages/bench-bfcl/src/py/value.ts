/**
 * Python values, modelled closely enough that BFCL's checks (which are Python code) keep their
 * meaning: `int` and `float` are different types, `bool` is not `int` for type checks but equals
 * 1 and 0, tuples are not lists, dict keys may be any hashable value and keep insertion order.
 *
 * - `null` is `None`, `boolean` is `bool`, `string` is `str`, arrays are `list`;
 * - a JS `number` is always an `int` (integral, within 2^53) and a `bigint` an `int` beyond it;
 * - `PyFloat` wraps a `float`, so `1.0` and `1` stay apart;
 * - `PyTuple`, `PyDict`, `PySet` are the containers; `PyOpaque` stands for any other object
 *   (an `mpf`, a `Decimal`, ...), known only by its type name and `repr`.
 */
export type Py = null | boolean | number | bigint | string | PyFloat | Py[] | PyTuple | PyDict | PySet | PyOpaque;

export class PyFloat {
  constructor(readonly value: number) {}
}

export class PyTuple {
  constructor(readonly items: readonly Py[]) {}
}

/** An object that is neither a number, a string nor a container. Never JSON-serialisable. */
export class PyOpaque {
  private text: string | (() => string);
  constructor(
    readonly typeName: string,
    /** Its `repr`, or a function that computes it when first asked (some are costly and rarely needed). */
    repr: string | (() => string),
    /** How it compares with other values; by default, equal only to an opaque value of the same type and repr. */
    readonly equals?: (other: Py) => boolean,
  ) {
    this.text = repr;
  }

  get repr(): string {
    if (typeof this.text !== "string") this.text = this.text();
    return this.text;
  }
}

/** A Python exception, carried as a JS error so that call sites can catch it by type. */
export class PyError extends Error {
  override readonly name = "PyError";
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export function typeError(message: string): PyError {
  return new PyError("TypeError", message);
}

/** `float(x)` for a JS number. */
export function float(value: number): PyFloat {
  return new PyFloat(value);
}

/** An `int` from a JS integer or a bigint, normalised to `number` when it fits. */
export function int(value: number | bigint): number | bigint {
  if (typeof value === "number") {
    if (!Number.isInteger(value)) throw new RangeError(`int(): ${value} is not integral`);
    return value === 0 ? 0 : value;
  }
  return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value;
}
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** `type(value).__name__`. */
export function typeName(value: Py): string {
  if (value === null) return "NoneType";
  switch (typeof value) {
    case "boolean":
      return "bool";
    case "number":
    case "bigint":
      return "int";
    case "string":
      return "str";
    default:
      if (Array.isArray(value)) return "list";
      if (value instanceof PyFloat) return "float";
      if (value instanceof PyTuple) return "tuple";
      if (value instanceof PyDict) return "dict";
      if (value instanceof PySet) return "set";
      return value.typeName;
  }
}

export function isInt(value: Py): value is number | bigint {
  return typeof value === "number" || typeof value === "bigint";
}

/** Any Python number (`bool` included, as Python's numeric tower does). */
export function isNumber(value: Py): value is boolean | number | bigint | PyFloat {
  return typeof value === "boolean" || typeof value === "number" || typeof value === "bigint" || value instanceof PyFloat;
}

/** The numeric value of a number as a JS double (bools are 0 and 1). */
export function toDouble(value: boolean | number | bigint | PyFloat): number {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  return value.value;
}

/** Python truthiness. */
export function truthy(value: Py): boolean {
  if (value === null) return false;
  switch (typeof value) {
    case "boolean":
      return value;
    case "number":
      return value !== 0;
    case "bigint":
      return value !== 0n;
    case "string":
      return value.length > 0;
    default:
      if (Array.isArray(value)) return value.length > 0;
      if (value instanceof PyFloat) return value.value !== 0;
      if (value instanceof PyTuple) return value.items.length > 0;
      if (value instanceof PyDict || value instanceof PySet) return value.size > 0;
      return true;
  }
}

/** Python `a == b`. */
export function pyEquals(a: Py, b: Py): boolean {
  if (a === b) return !(a instanceof PyFloat && Number.isNaN(a.value));
  if (a === null || b === null) return false;
  if (typeof a === "string" || typeof b === "string") return false;
  if (isNumber(a)) return isNumber(b) && numbersEqual(a, b);
  if (isNumber(b)) return false;
  if (Array.isArray(a)) return Array.isArray(b) && sequencesEqual(a, b);
  if (Array.isArray(b)) return false;
  if (a instanceof PyTuple) return b instanceof PyTuple && sequencesEqual(a.items, b.items);
  if (a instanceof PyDict) return b instanceof PyDict && dictsEqual(a, b);
  if (a instanceof PySet) return b instanceof PySet && a.size === b.size && [...a].every((item) => b.has(item));
  if (a instanceof PyOpaque) return a.equals ? a.equals(b) : b instanceof PyOpaque && a.typeName === b.typeName && a.repr === b.repr;
  if (b instanceof PyOpaque && b.equals) return b.equals(a);
  return false;
}

function sequencesEqual(a: readonly Py[], b: readonly Py[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y && !pyEquals(x, y)) return false;
  }
  return true;
}

function dictsEqual(a: PyDict, b: PyDict): boolean {
  if (a.size !== b.size) return false;
  for (const [key, value] of a) {
    if (!b.has(key)) return false;
    const other = b.get(key)!;
    if (other !== value && !pyEquals(value, other)) return false;
  }
  return true;
}

function numbersEqual(a: boolean | number | bigint | PyFloat, b: boolean | number | bigint | PyFloat): boolean {
  if (typeof a === "bigint" || typeof b === "bigint") {
    const x = typeof a === "bigint" ? a : exactInteger(a);
    const y = typeof b === "bigint" ? b : exactInteger(b);
    return x !== undefined && y !== undefined && x === y;
  }
  return toDouble(a) === toDouble(b);
}

function exactInteger(value: boolean | number | PyFloat): bigint | undefined {
  const x = toDouble(value);
  return Number.isInteger(x) ? BigInt(x) : undefined;
}

/**
 * The identity of a hashable value as a dict key or set member. Values Python considers equal
 * share a key (`1`, `1.0` and `True`); lists, dicts and sets are unhashable.
 */
export function hashKey(value: Py): string {
  if (value === null) return "N";
  switch (typeof value) {
    case "boolean":
      return value ? "n1" : "n0";
    case "number":
      return `n${value}`;
    case "bigint":
      return `n${value}`;
    case "string":
      return `s${value}`;
    default:
      if (value instanceof PyFloat) {
        const x = value.value;
        if (Number.isInteger(x)) return Number.isSafeInteger(x) ? `n${x}` : `n${BigInt(x)}`;
        return `f${x}`;
      }
      if (value instanceof PyTuple) return `t(${value.items.map(hashKey).join(",")})`;
      if (value instanceof PyOpaque) return `o${value.typeName}:${value.repr}`;
      throw typeError(`unhashable type: '${typeName(value)}'`);
  }
}

/** A Python `dict`: insertion-ordered, keyed by any hashable value. */
export class PyDict implements Iterable<[Py, Py]> {
  private readonly entries = new Map<string, [Py, Py]>();

  constructor(entries?: Iterable<readonly [Py, Py]>) {
    if (entries) for (const [key, value] of entries) this.set(key, value);
  }

  /** A dict with string keys from a plain record (insertion order kept). */
  static of(record: Readonly<Record<string, Py>>): PyDict {
    return new PyDict(Object.entries(record));
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: Py): boolean {
    return this.entries.has(hashKey(key));
  }

  get(key: Py): Py | undefined {
    return this.entries.get(hashKey(key))?.[1];
  }

  set(key: Py, value: Py): void {
    const id = hashKey(key);
    const existing = this.entries.get(id);
    // Python keeps the first key object and its position when a key is re-assigned.
    if (existing) existing[1] = value;
    else this.entries.set(id, [key, value]);
  }

  delete(key: Py): boolean {
    return this.entries.delete(hashKey(key));
  }

  keys(): Py[] {
    return [...this.entries.values()].map(([key]) => key);
  }

  values(): Py[] {
    return [...this.entries.values()].map(([, value]) => value);
  }

  [Symbol.iterator](): Iterator<[Py, Py]> {
    return this.entries.values();
  }

  /** A shallow copy (`dict.copy()`). */
  copy(): PyDict {
    return new PyDict(this);
  }
}

/** A Python `set`, iterated in insertion order. */
export class PySet implements Iterable<Py> {
  private readonly members = new Map<string, Py>();

  constructor(items?: Iterable<Py>) {
    if (items) for (const item of items) this.add(item);
  }

  get size(): number {
    return this.members.size;
  }

  has(item: Py): boolean {
    return this.members.has(hashKey(item));
  }

  add(item: Py): void {
    const id = hashKey(item);
    if (!this.members.has(id)) this.members.set(id, item);
  }

  [Symbol.iterator](): Iterator<Py> {
    return this.members.values();
  }
}

/** `copy.deepcopy` for plain values (opaque objects are shared, as they are immutable here). */
export function deepCopy<T extends Py>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => deepCopy(item)) as T;
  if (value instanceof PyDict) return new PyDict(value.keys().map((key) => [key, deepCopy(value.get(key)!)])) as T;
  if (value instanceof PyTuple) return new PyTuple(value.items.map((item) => deepCopy(item))) as T;
  if (value instanceof PySet) return new PySet([...value]) as T;
  return value;
}
