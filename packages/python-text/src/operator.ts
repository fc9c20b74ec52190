import { isPyNumber, order } from "./compare.js";
import { PyException, typeError } from "./errors.js";
import { hashKey, PyHashDict, PySet, PyTuple } from "./objects.js";
import { keyError, pyEquals, pyTypeName, type PyObject } from "./value.js";

// Python's `operator` module on `PyObject`s: the arithmetic, the comparisons and the container
// protocol (`in`, `x[k]`, `x[k] = v`) as Python evaluates them, with the types Python gives the
// results (`int` stays `int`, `/` makes a `float`, a `float` operand makes a `float`, `bool` counts
// as an `int`) and the exceptions it raises for the wrong types. Exported as the `operator`
// namespace: `operator.add(a, b)`, `operator.lt(a, b)`, `operator.getitem(d, k)`.

function isIntLike(value: PyObject): value is boolean | bigint {
  return typeof value === "bigint" || typeof value === "boolean";
}

function big(value: boolean | bigint): bigint {
  return typeof value === "boolean" ? (value ? 1n : 0n) : value;
}

function unsupported(op: string, a: PyObject, b: PyObject): PyException {
  return typeError(`unsupported operand type(s) for ${op}: '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
}

function zeroDivision(text: string): PyException {
  return new PyException("ZeroDivisionError", text);
}

/** `a + b`: numbers; `str`, `list` and `tuple` concatenated with their own type. */
export function add(a: PyObject, b: PyObject): PyObject {
  if (isPyNumber(a) && isPyNumber(b)) return isIntLike(a) && isIntLike(b) ? big(a) + big(b) : Number(a) + Number(b);
  if (typeof a === "string") {
    if (typeof b === "string") return a + b;
    throw typeError(`can only concatenate str (not "${pyTypeName(b)}") to str`);
  }
  if (Array.isArray(a)) {
    if (Array.isArray(b)) return [...a, ...b];
    throw typeError(`can only concatenate list (not "${pyTypeName(b)}") to list`);
  }
  if (a instanceof PyTuple) {
    if (b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
    throw typeError(`can only concatenate tuple (not "${pyTypeName(b)}") to tuple`);
  }
  throw unsupported("+", a, b);
}

/** `a - b` for numbers. */
export function sub(a: PyObject, b: PyObject): PyObject {
  if (isPyNumber(a) && isPyNumber(b)) return isIntLike(a) && isIntLike(b) ? big(a) - big(b) : Number(a) - Number(b);
  throw unsupported("-", a, b);
}

/** `a * b`: numbers, or a `str`, `list` or `tuple` repeated an int number of times. */
export function mul(a: PyObject, b: PyObject): PyObject {
  if (isPyNumber(a) && isPyNumber(b)) return isIntLike(a) && isIntLike(b) ? big(a) * big(b) : Number(a) * Number(b);
  const repeated = repeat(a, b) ?? repeat(b, a);
  if (repeated !== undefined) return repeated;
  throw unsupported("*", a, b);
}

function repeat(sequence: PyObject, times: PyObject): PyObject | undefined {
  if (typeof sequence !== "string" && !Array.isArray(sequence) && !(sequence instanceof PyTuple)) return undefined;
  if (!isIntLike(times)) throw typeError(`can't multiply sequence by non-int of type '${pyTypeName(times)}'`);
  const n = Math.max(0, Number(big(times)));
  if (typeof sequence === "string") return sequence.repeat(n);
  const items = Array.isArray(sequence) ? sequence : sequence.items;
  const out: PyObject[] = [];
  for (let i = 0; i < n; i++) out.push(...items);
  return Array.isArray(sequence) ? out : new PyTuple(out);
}

/** `a / b`: always a float. */
export function truediv(a: PyObject, b: PyObject): PyObject {
  if (!isPyNumber(a) || !isPyNumber(b)) throw unsupported("/", a, b);
  const divisor = Number(b);
  if (divisor === 0) throw zeroDivision(isIntLike(a) && isIntLike(b) ? "division by zero" : "float division by zero");
  return Number(a) / divisor;
}

/** `a // b`: floor division, an int for ints. */
export function floordiv(a: PyObject, b: PyObject): PyObject {
  if (!isPyNumber(a) || !isPyNumber(b)) throw unsupported("//", a, b);
  if (isIntLike(a) && isIntLike(b)) {
    const d = big(b);
    if (d === 0n) throw zeroDivision("integer division or modulo by zero");
    const n = big(a);
    const q = n / d;
    return q * d !== n && n < 0n !== d < 0n ? q - 1n : q;
  }
  const divisor = Number(b);
  if (divisor === 0) throw zeroDivision("float floor division by zero");
  return Math.floor(Number(a) / divisor);
}

/** `a % b`: the remainder takes the divisor's sign. A `str` left operand is %-formatting, which is not modelled. */
export function mod(a: PyObject, b: PyObject): PyObject {
  if (typeof a === "string") throw typeError("not all arguments converted during string formatting");
  if (!isPyNumber(a) || !isPyNumber(b)) throw unsupported("%", a, b);
  if (isIntLike(a) && isIntLike(b)) {
    const d = big(b);
    if (d === 0n) throw zeroDivision("integer division or modulo by zero");
    const r = big(a) % d;
    return r !== 0n && r < 0n !== d < 0n ? r + d : r;
  }
  const x = Number(a);
  const y = Number(b);
  if (y === 0) throw zeroDivision("float modulo");
  let r = x % y;
  if (r !== 0 && r < 0 !== y < 0) r += y;
  else if (r === 0) r = y < 0 ? -0 : 0;
  return r;
}

/** `a ** b`: an int for an int to a non-negative int power, else a float. */
export function pow(a: PyObject, b: PyObject): PyObject {
  if (!isPyNumber(a) || !isPyNumber(b)) throw unsupported("** or pow()", a, b);
  if (isIntLike(a) && isIntLike(b) && big(b) >= 0n) return big(a) ** big(b);
  const x = Number(a);
  const y = Number(b);
  if (x === 0 && y < 0) throw zeroDivision("0.0 cannot be raised to a negative power");
  if (x < 0 && !Number.isInteger(y)) throw new PyException("ValueError", "complex results are not supported");
  const result = x ** y;
  if (!Number.isFinite(result) && Number.isFinite(x) && Number.isFinite(y)) throw new PyException("OverflowError", "(34, 'Numerical result out of range')");
  return result;
}

/** `-a`. */
export function neg(a: PyObject): PyObject {
  if (isIntLike(a)) return -big(a);
  if (typeof a === "number") return -a;
  throw typeError(`bad operand type for unary -: '${pyTypeName(a)}'`);
}

/** `+a` (`+True` is `1`). */
export function pos(a: PyObject): PyObject {
  if (isIntLike(a)) return big(a);
  if (typeof a === "number") return a;
  throw typeError(`bad operand type for unary +: '${pyTypeName(a)}'`);
}

/** `~a` for ints. */
export function invert(a: PyObject): PyObject {
  if (isIntLike(a)) return -big(a) - 1n;
  throw typeError(`bad operand type for unary ~: '${pyTypeName(a)}'`);
}

/** `abs(a)`. */
export function abs(a: PyObject): PyObject {
  if (isIntLike(a)) {
    const n = big(a);
    return n < 0n ? -n : n;
  }
  if (typeof a === "number") return Math.abs(a);
  throw typeError(`bad operand type for abs(): '${pyTypeName(a)}'`);
}

/** The binary arithmetic operators by their symbol in Python source. */
export const BINARY: Readonly<Partial<Record<string, (a: PyObject, b: PyObject) => PyObject>>> = {
  "+": add,
  "-": sub,
  "*": mul,
  "/": truediv,
  "//": floordiv,
  "%": mod,
  "**": pow,
};

/** `a < b`: numbers (an int and a float exactly), strings by code point, lists and tuples item by item. */
export function lt(a: PyObject, b: PyObject): boolean {
  return order("<", a, b) < 0;
}

/** `a <= b`. */
export function le(a: PyObject, b: PyObject): boolean {
  return order("<=", a, b) <= 0;
}

/** `a > b`. */
export function gt(a: PyObject, b: PyObject): boolean {
  return order(">", a, b) > 0;
}

/** `a >= b`. */
export function ge(a: PyObject, b: PyObject): boolean {
  return order(">=", a, b) >= 0;
}

/** `a == b` (`pyEquals`). */
export function eq(a: PyObject, b: PyObject): boolean {
  return pyEquals(a, b);
}

/**
 * `item in container`: a substring of a `str`; a key of a dict or a member of a set (an
 * unhashable item raises); an item of a list or tuple by `==`.
 */
export function contains(container: PyObject, item: PyObject): boolean {
  if (typeof container === "string") {
    if (typeof item !== "string") throw typeError(`'in <string>' requires string as left operand, not ${pyTypeName(item)}`);
    return container.includes(item);
  }
  if (container instanceof PyHashDict || container instanceof PySet) return container.has(item);
  if (container instanceof Map) {
    const key = hashKey(item);
    return typeof key === "string" && container.has(key);
  }
  const items = Array.isArray(container) ? container : container instanceof PyTuple ? container.items : undefined;
  if (items === undefined) throw typeError(`argument of type '${pyTypeName(container)}' is not iterable`);
  for (const element of items) if (element === item || pyEquals(element, item)) return true;
  return false;
}

/** A sequence index: an `int` or a `bool`, negative from the end, checked against `length`. */
function sequenceIndex(length: number, key: PyObject, notAnIndex: (type: string) => string, outOfRange: string): number {
  if (!isIntLike(key)) throw typeError(notAnIndex(pyTypeName(key)));
  const n = Number(big(key));
  const index = n < 0 ? length + n : n;
  if (index < 0 || index >= length) throw new PyException("IndexError", outOfRange);
  return index;
}

const LIST_INDEX = (type: string): string => `list indices must be integers or slices, not ${type}`;
const TUPLE_INDEX = (type: string): string => `tuple indices must be integers or slices, not ${type}`;
const STRING_INDEX = (type: string): string => `string indices must be integers, not '${type}'`;

/** `container[key]`: a dict's value (`KeyError` when absent), or an item of a list, tuple or string (by code point). */
export function getitem(container: PyObject, key: PyObject): PyObject {
  if (container instanceof PyHashDict) {
    const value = container.get(key);
    if (value === undefined) throw keyError(key);
    return value;
  }
  if (container instanceof Map) {
    const hash = hashKey(key);
    const value = typeof hash === "string" ? container.get(hash) : undefined;
    if (value === undefined) throw keyError(key);
    return value;
  }
  if (Array.isArray(container)) return container[sequenceIndex(container.length, key, LIST_INDEX, "list index out of range")]!;
  if (container instanceof PyTuple) return container.items[sequenceIndex(container.items.length, key, TUPLE_INDEX, "tuple index out of range")]!;
  if (typeof container === "string") {
    const chars = Array.from(container);
    return chars[sequenceIndex(chars.length, key, STRING_INDEX, "string index out of range")]!;
  }
  throw typeError(`'${pyTypeName(container)}' object is not subscriptable`);
}

/**
 * `container[key] = value` on a dict or a list. A `Map` dict holds only `str` keys, so another
 * key raises `TypeError` there; a `PyHashDict` takes any hashable key.
 */
export function setitem(container: PyObject, key: PyObject, value: PyObject): void {
  if (container instanceof PyHashDict) {
    container.set(key, value);
    return;
  }
  if (container instanceof Map) {
    const hash = hashKey(key);
    if (typeof hash !== "string") throw typeError(`this dict holds only str keys, not '${pyTypeName(key)}'`);
    (container as Map<string, PyObject>).set(hash, value);
    return;
  }
  if (Array.isArray(container)) {
    container[sequenceIndex(container.length, key, LIST_INDEX, "list assignment index out of range")] = value;
    return;
  }
  throw typeError(`'${pyTypeName(container)}' object does not support item assignment`);
}
