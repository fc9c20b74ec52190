import { typeError } from "./errors.js";
import { PyTuple } from "./objects.js";
import { compareCodePoints } from "./string.js";
import { pyEquals, pyTypeName, type PyObject } from "./value.js";

// Python's ordering (`<`, `<=`, `>`, `>=`, `sorted`), shared by `operator`, `ops` and `json.dumps(sort_keys=True)`.

/** A Python number: `bool` is an `int` in arithmetic and comparisons. */
export type PyNumber = boolean | bigint | number;

export function isPyNumber(value: PyObject): value is PyNumber {
  const type = typeof value;
  return type === "bigint" || type === "number" || type === "boolean";
}

/**
 * The order of two numbers, negative, zero or positive, or `NaN` when one is `nan` (every
 * comparison with it is false). An int and a float compare exactly, as Python compares them
 * (`2**53 + 1 > 2.0**53`).
 */
export function compareNumbers(a: PyNumber, b: PyNumber): number {
  const x = typeof a === "boolean" ? (a ? 1n : 0n) : a;
  const y = typeof b === "boolean" ? (b ? 1n : 0n) : b;
  if (typeof x === "bigint" && typeof y === "bigint") return x < y ? -1 : x > y ? 1 : 0;
  if (typeof x === "number" && typeof y === "number") return x < y ? -1 : x > y ? 1 : x === y ? 0 : NaN;
  const float = typeof x === "number" ? x : (y as number);
  const int = typeof x === "bigint" ? x : (y as bigint);
  if (Number.isNaN(float)) return NaN;
  let order: number;
  if (!Number.isFinite(float)) order = float > 0 ? 1 : -1;
  else {
    const floor = Math.floor(float);
    const whole = BigInt(floor);
    order = whole > int ? 1 : whole < int ? -1 : float > floor ? 1 : 0;
  }
  return typeof x === "number" ? order : -order;
}

/**
 * The order Python's `op` (`<`, `<=`, `>`, `>=`) sees between two values: numbers, strings by
 * code point, lists with lists and tuples with tuples item by item (at the first unequal pair).
 * Other pairs raise `TypeError: '<' not supported between instances of …`.
 */
export function order(op: string, a: PyObject, b: PyObject): number {
  if (isPyNumber(a) && isPyNumber(b)) return compareNumbers(a, b);
  if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b);
  const x = Array.isArray(a) ? a : a instanceof PyTuple ? a.items : undefined;
  const y = Array.isArray(b) ? b : b instanceof PyTuple ? b.items : undefined;
  if (x !== undefined && y !== undefined && Array.isArray(a) === Array.isArray(b)) {
    const n = Math.min(x.length, y.length);
    for (let i = 0; i < n; i++) {
      const left = x[i]!;
      const right = y[i]!;
      if (left !== right && !pyEquals(left, right)) return order(op, left, right);
    }
    return x.length - y.length;
  }
  throw typeError(`'${op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
}

/** The comparator `sorted()` uses: Python's `<`. */
export function compareOrder(a: PyObject, b: PyObject): number {
  return order("<", a, b);
}
