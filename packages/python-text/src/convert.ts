import { PyException, typeError, valueError } from "./errors.js";
import { strip } from "./string.js";
import { pyRepr, pyTypeName, type PyObject } from "./value.js";

// Python's `float(x)` and `int(x)`, as `pyStr` is `str(x)`.

const DIGITS = String.raw`\d(?:_?\d)*`;
const FLOAT_TEXT = new RegExp(String.raw`^[+-]?(?:${DIGITS}\.(?:${DIGITS})?|\.${DIGITS}|${DIGITS})(?:[eE][+-]?${DIGITS})?$`);
const SPECIAL_FLOAT = /^([+-]?)(inf|infinity|nan)$/i;
const INT_TEXT = new RegExp(`^[+-]?${DIGITS}$`);

/**
 * `float(value)`: a number as a float (`True` is `1.0`; an int too large is an `OverflowError`),
 * or a string as Python reads it (surrounding whitespace, `_` between digits, `inf`, `nan`).
 */
export function pyFloat(value: PyObject): number {
  switch (typeof value) {
    case "number":
      return value;
    case "boolean":
      return value ? 1 : 0;
    case "bigint": {
      const x = Number(value);
      if (!Number.isFinite(x)) throw new PyException("OverflowError", "int too large to convert to float");
      return x;
    }
    case "string": {
      const text = strip(value);
      if (FLOAT_TEXT.test(text)) return Number(text.replaceAll("_", ""));
      const special = SPECIAL_FLOAT.exec(text);
      if (special) return special[2]!.toLowerCase() === "nan" ? NaN : special[1] === "-" ? -Infinity : Infinity;
      throw valueError(`could not convert string to float: ${pyRepr(value)}`);
    }
  }
  throw typeError(`float() argument must be a string or a real number, not '${pyTypeName(value)}'`);
}

/** `int(value)`: a float truncated toward zero, a bool as `0`/`1`, a base-10 string (whitespace and `_` between digits allowed). */
export function pyInt(value: PyObject): bigint {
  switch (typeof value) {
    case "bigint":
      return value;
    case "boolean":
      return value ? 1n : 0n;
    case "number":
      if (Number.isNaN(value)) throw valueError("cannot convert float NaN to integer");
      if (!Number.isFinite(value)) throw new PyException("OverflowError", "cannot convert float infinity to integer");
      return BigInt(Math.trunc(value));
    case "string": {
      const text = strip(value);
      if (INT_TEXT.test(text)) return BigInt(text.replaceAll("_", ""));
      throw valueError(`invalid literal for int() with base 10: ${pyRepr(value)}`);
    }
  }
  throw typeError(`int() argument must be a string, a bytes-like object or a real number, not '${pyTypeName(value)}'`);
}
