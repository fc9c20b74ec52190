import { isPyNumber, order } from "./compare.js";
import { attributeError, typeError } from "./errors.js";
import { PyHashDict, PyOpaque, PySet, PyTuple } from "./objects.js";
import * as operator from "./operator.js";
import { codePointLength } from "./string.js";
import { pyEquals, pyTypeName, type PyDict, type PyObject, type PyValue } from "./value.js";

// The Python operations benchmark tools apply to arguments the agent wrote, with the errors
// Python raises when the agent wrote the wrong type.

/**
 * `list(value)`, what `for item in value` visits, as a new array: lists and tuples their items,
 * strings their characters (code points), dicts their keys, sets their members; others raise.
 */
export function iterate(value: PyValue): PyValue[];
export function iterate(value: PyObject): PyObject[];
export function iterate(value: PyObject): PyObject[] {
  if (Array.isArray(value)) return [...value];
  if (typeof value === "string") return Array.from(value);
  if (value instanceof Map) return [...value.keys()];
  if (value instanceof PyTuple) return [...value.items];
  if (value instanceof PyHashDict) return value.keys();
  if (value instanceof PySet) return [...value];
  throw typeError(`'${pyTypeName(value)}' object is not iterable`);
}

/** `len(value)`: strings count code points; a model counts its fields. */
export function len(value: PyObject): number {
  if (Array.isArray(value)) return value.length;
  if (typeof value === "string") return codePointLength(value);
  if (value instanceof Map || value instanceof PyHashDict || value instanceof PySet) return value.size;
  if (value instanceof PyTuple) return value.items.length;
  if (value !== null && typeof value === "object" && !(value instanceof PyOpaque)) return Object.keys(value).length;
  throw typeError(`object of type '${pyTypeName(value)}' has no len()`);
}

/** `value.count(item)` on a list (by `==`) or a string (non-overlapping substrings). */
export function count(value: PyValue, item: PyValue): number {
  if (Array.isArray(value)) return value.filter((element) => pyEquals(element, item)).length;
  if (typeof value === "string") {
    if (typeof item !== "string") throw typeError(`must be str, not ${pyTypeName(item)}`);
    if (item === "") return Array.from(value).length + 1;
    return value.split(item).length - 1;
  }
  throw attributeError(`'${pyTypeName(value)}' object has no attribute 'count'`);
}

/** The dict key for `key in dict` / `dict[key]`: unhashable keys raise; non-strings never match. */
export function dictKey(key: PyValue): string | undefined {
  if (Array.isArray(key) || key instanceof Map || (key !== null && typeof key === "object")) {
    throw typeError(`unhashable type: '${pyTypeName(key)}'`);
  }
  return typeof key === "string" ? key : undefined;
}

/** `key in dict`. */
export function hasKey(dict: ReadonlyMap<string, unknown>, key: PyValue): boolean {
  const k = dictKey(key);
  return k !== undefined && dict.has(k);
}

/** `dict.get(key)` that honours Python's hashing rules. */
export function getKey<V>(dict: ReadonlyMap<string, V>, key: PyValue): V | undefined {
  const k = dictKey(key);
  return k === undefined ? undefined : dict.get(k);
}

type Number = bigint | number;

// The arithmetic and comparisons below are Python's (`operator.ts`) for the operand types the
// benchmarks' tools accept; other types raise here, with the message the tools have always given.

function numeric(symbol: string, a: PyValue, b: PyValue, op: (x: PyObject, y: PyObject) => PyObject): Number {
  if (!isPyNumber(a) || !isPyNumber(b)) throw typeError(`unsupported operand type(s) for ${symbol}: '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
  return op(a, b) as Number;
}

/** `a + b` for numbers (int + int stays int; anything with a float is a float). */
export function add(a: PyValue, b: PyValue, symbol = "+"): Number {
  return numeric(symbol, a, b, operator.add);
}

/** `a - b` for numbers. */
export function sub(a: PyValue, b: PyValue, symbol = "-"): Number {
  return numeric(symbol, a, b, operator.sub);
}

/** `a * b` for numbers; an int times a string or list repeats it, as in Python. */
export function mul(a: PyValue, b: PyValue): PyValue {
  const isInt = (value: PyValue): boolean => typeof value === "bigint" || typeof value === "boolean";
  const isSequence = (value: PyValue): boolean => typeof value === "string" || Array.isArray(value);
  if ((isInt(a) && isSequence(b)) || (isSequence(a) && isInt(b))) return operator.mul(a, b) as PyValue;
  return numeric("*", a, b, operator.mul);
}

/** `a < b` for numbers or strings. */
export function lessThan(a: PyValue, b: PyValue): boolean {
  return compare("<", a, b) < 0;
}

/** `a > b` for numbers or strings. */
export function greaterThan(a: PyValue, b: PyValue): boolean {
  return compare(">", a, b) > 0;
}

function compare(symbol: string, a: PyValue, b: PyValue): number {
  const comparable = (isPyNumber(a) && isPyNumber(b)) || (typeof a === "string" && typeof b === "string");
  if (!comparable) throw typeError(`'${symbol}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
  return order(symbol, a, b);
}

/** `max(a, b)`: `b` replaces `a` only when `b > a`, so the first of equal values wins. */
export function max(a: PyValue, b: PyValue): PyValue {
  return greaterThan(b, a) ? b : a;
}

/** `sorted(value)` for lists of strings or numbers. */
export function sorted(value: PyValue): PyValue[] {
  const items = iterate(value);
  return items.sort((a, b) => {
    if (lessThan(b, a)) return 1;
    if (lessThan(a, b)) return -1;
    return 0;
  });
}

/** `abs(x)` for numbers. */
export function abs(value: Number): Number {
  return operator.abs(value) as Number;
}

/** A dict argument as a `Map`, or undefined when it is not a dict. */
export function asDict(value: PyValue): PyDict | undefined {
  return value instanceof Map ? value : undefined;
}
