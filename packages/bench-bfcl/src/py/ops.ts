import { compareCodePoints } from "@envace/python-text";
import { pyRepr } from "./repr.js";
import { float, int, isInt, PyError, PyFloat, PyTuple, toDouble, typeError, typeName } from "./value.js";
import type { Py } from "./value.js";

/**
 * Python's arithmetic and comparisons on `Py` values: int stays int where Python keeps it
 * (`+ - * // % **`), `/` always gives a float, mixing in a float gives a float, `bool` counts as
 * an int, and mismatched types raise the `TypeError` Python raises.
 */
type Num = boolean | number | bigint | PyFloat;

function isNum(value: Py): value is Num {
  return typeof value === "boolean" || typeof value === "number" || typeof value === "bigint" || value instanceof PyFloat;
}

function isIntLike(value: Py): value is boolean | number | bigint {
  return typeof value === "boolean" || isInt(value);
}

function big(value: boolean | number | bigint): bigint {
  return typeof value === "boolean" ? (value ? 1n : 0n) : BigInt(value);
}

function unsupported(op: string, a: Py, b: Py): PyError {
  return typeError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

function intResult(exact: number, fallback: () => bigint): number | bigint {
  return Number.isSafeInteger(exact) ? int(exact) : int(fallback());
}

export function add(a: Py, b: Py): Py {
  if (isNum(a) && isNum(b)) {
    if (isIntLike(a) && isIntLike(b)) return intResult(toDouble(a) + toDouble(b), () => big(a) + big(b));
    return float(toDouble(a) + toDouble(b));
  }
  if (typeof a === "string") {
    if (typeof b === "string") return a + b;
    throw typeError(`can only concatenate str (not "${typeName(b)}") to str`);
  }
  if (Array.isArray(a)) {
    if (Array.isArray(b)) return [...a, ...b];
    throw typeError(`can only concatenate list (not "${typeName(b)}") to list`);
  }
  if (a instanceof PyTuple && b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
  throw unsupported("+", a, b);
}

export function sub(a: Py, b: Py): Py {
  if (isNum(a) && isNum(b)) {
    if (isIntLike(a) && isIntLike(b)) return intResult(toDouble(a) - toDouble(b), () => big(a) - big(b));
    return float(toDouble(a) - toDouble(b));
  }
  throw unsupported("-", a, b);
}

export function mul(a: Py, b: Py): Py {
  if (isNum(a) && isNum(b)) {
    if (isIntLike(a) && isIntLike(b)) return intResult(toDouble(a) * toDouble(b), () => big(a) * big(b));
    return float(toDouble(a) * toDouble(b));
  }
  const repeat = (seq: Py, count: Py): Py | undefined => {
    if (typeof seq !== "string" && !Array.isArray(seq)) return undefined;
    if (!isIntLike(count)) throw typeError(`can't multiply sequence by non-int of type '${typeName(count)}'`);
    const n = Math.max(0, Number(big(count)));
    if (typeof seq === "string") return seq.repeat(n);
    if (Array.isArray(seq)) return Array.from({ length: n }, () => seq).flat();
    return undefined;
  };
  const repeated = repeat(a, b) ?? repeat(b, a);
  if (repeated !== undefined) return repeated;
  throw unsupported("*", a, b);
}

export function truediv(a: Py, b: Py): Py {
  if (!isNum(a) || !isNum(b)) throw unsupported("/", a, b);
  const divisor = toDouble(b);
  if (divisor === 0) throw new PyError("ZeroDivisionError", isIntLike(a) && isIntLike(b) ? "division by zero" : "float division by zero");
  return float(toDouble(a) / divisor);
}

export function floordiv(a: Py, b: Py): Py {
  if (!isNum(a) || !isNum(b)) throw unsupported("//", a, b);
  if (isIntLike(a) && isIntLike(b)) {
    const d = big(b);
    if (d === 0n) throw new PyError("ZeroDivisionError", "integer division or modulo by zero");
    const n = big(a);
    const q = n / d;
    return int(q * d !== n && n < 0n !== d < 0n ? q - 1n : q);
  }
  const divisor = toDouble(b);
  if (divisor === 0) throw new PyError("ZeroDivisionError", "float floor division by zero");
  return float(Math.floor(toDouble(a) / divisor));
}

export function mod(a: Py, b: Py): Py {
  if (typeof a === "string") throw typeError("not all arguments converted during string formatting");
  if (!isNum(a) || !isNum(b)) throw unsupported("%", a, b);
  if (isIntLike(a) && isIntLike(b)) {
    const d = big(b);
    if (d === 0n) throw new PyError("ZeroDivisionError", "integer division or modulo by zero");
    const r = big(a) % d;
    return int(r !== 0n && r < 0n !== d < 0n ? r + d : r);
  }
  const x = toDouble(a);
  const y = toDouble(b);
  if (y === 0) throw new PyError("ZeroDivisionError", "float modulo");
  let r = x % y;
  if (r !== 0 && r < 0 !== y < 0) r += y;
  else if (r === 0) r = y < 0 ? -0 : 0;
  return float(r);
}

export function pow(a: Py, b: Py): Py {
  if (!isNum(a) || !isNum(b)) throw unsupported("** or pow()", a, b);
  if (isIntLike(a) && isIntLike(b) && big(b) >= 0n) return int(big(a) ** big(b));
  const x = toDouble(a);
  const y = toDouble(b);
  if (x === 0 && y < 0) throw new PyError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
  if (x < 0 && !Number.isInteger(y)) throw new PyError("ValueError", "complex results are not supported");
  const result = x ** y;
  if (!Number.isFinite(result) && Number.isFinite(x) && Number.isFinite(y)) throw new PyError("OverflowError", "(34, 'Numerical result out of range')");
  return float(result);
}

export function neg(a: Py): Py {
  if (isIntLike(a)) return typeof a === "bigint" ? int(-a) : int(-toDouble(a));
  if (a instanceof PyFloat) return float(-a.value);
  throw typeError(`bad operand type for unary -: '${typeName(a)}'`);
}

export function pos(a: Py): Py {
  if (isIntLike(a)) return typeof a === "boolean" ? (a ? 1 : 0) : a;
  if (a instanceof PyFloat) return a;
  throw typeError(`bad operand type for unary +: '${typeName(a)}'`);
}

export function invert(a: Py): Py {
  if (isIntLike(a)) return int(-big(a) - 1n);
  throw typeError(`bad operand type for unary ~: '${typeName(a)}'`);
}

export function abs(a: Py): Py {
  if (isIntLike(a)) return typeof a === "bigint" ? int(a < 0n ? -a : a) : int(Math.abs(toDouble(a)));
  if (a instanceof PyFloat) return float(Math.abs(a.value));
  throw typeError(`bad operand type for abs(): '${typeName(a)}'`);
}

/** The arithmetic operators by their symbol in Python source. */
export const ARITHMETIC_OPERATORS: Partial<Record<string, (a: Py, b: Py) => Py>> = {
  "+": add,
  "-": sub,
  "*": mul,
  "/": truediv,
  "//": floordiv,
  "%": mod,
  "**": pow,
};

export type Comparison = "<" | "<=" | ">" | ">=";

/** Python's ordering comparisons (`==` is `pyEquals`). */
export function compare(op: Comparison, a: Py, b: Py): boolean {
  const order = ordering(op, a, b);
  switch (op) {
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
  }
}

/** Negative, zero or positive; NaN compares false with everything. */
function ordering(op: Comparison, a: Py, b: Py): number {
  if (isNum(a) && isNum(b)) {
    if (typeof a === "bigint" || typeof b === "bigint") {
      if ((a instanceof PyFloat && !Number.isInteger(a.value)) || (b instanceof PyFloat && !Number.isInteger(b.value))) return toDouble(a) - toDouble(b);
      const x = a instanceof PyFloat ? BigInt(a.value) : big(a);
      const y = b instanceof PyFloat ? BigInt(b.value) : big(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    return toDouble(a) - toDouble(b);
  }
  if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b);
  const seq = (v: Py): readonly Py[] | undefined => (Array.isArray(v) ? v : undefined);
  const tuple = (v: Py): readonly Py[] | undefined => (v instanceof PyTuple ? v.items : undefined);
  const pair = seq(a) && seq(b) ? ([seq(a)!, seq(b)!] as const) : tuple(a) && tuple(b) ? ([tuple(a)!, tuple(b)!] as const) : undefined;
  if (pair) {
    const [x, y] = pair;
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const left = x[i]!;
      const right = y[i]!;
      if (ordering("<", left, right) < 0) return -1;
      if (ordering("<", right, left) < 0) return 1;
    }
    return x.length - y.length;
  }
  throw typeError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

/** Python `float(value)`. */
export function toFloat(value: Py): PyFloat {
  if (isNum(value)) return float(toDouble(value));
  if (typeof value === "string") {
    const text = value.trim().replaceAll("_", "").toLowerCase();
    if (/^[+-]?(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)$/.test(text)) return float(Number(text));
    if (/^[+-]?(?:inf|infinity)$/.test(text)) return float(text.startsWith("-") ? -Infinity : Infinity);
    if (/^[+-]?nan$/.test(text)) return float(NaN);
    throw new PyError("ValueError", `could not convert string to float: ${pyRepr(value)}`);
  }
  throw typeError(`float() argument must be a string or a real number, not '${typeName(value)}'`);
}

/** Python `int(value)`. */
export function toInt(value: Py): number | bigint {
  if (isIntLike(value)) return typeof value === "boolean" ? (value ? 1 : 0) : value;
  if (value instanceof PyFloat) {
    if (!Number.isFinite(value.value)) throw new PyError(Number.isNaN(value.value) ? "ValueError" : "OverflowError", Number.isNaN(value.value) ? "cannot convert float NaN to integer" : "cannot convert float infinity to integer");
    return int(BigInt(Math.trunc(value.value)));
  }
  if (typeof value === "string") {
    const text = value.trim();
    if (/^[+-]?\d(?:_?\d)*$/.test(text)) return int(BigInt(text.replaceAll("_", "")));
    throw new PyError("ValueError", `invalid literal for int() with base 10: ${pyRepr(value)}`);
  }
  throw typeError(`int() argument must be a string, a bytes-like object or a real number, not '${typeName(value)}'`);
}
