import { roundFloat } from "@envace/python-text";
import { decimalFromDouble, decimalFromInt, decimalRepr, decimalSqrt } from "../../py/decimal.js";
import type { Decimal } from "../../py/decimal.js";
import { div, divAny, dpsToPrec, exact, logReal, mpReprAny, rationalOfDouble } from "../../py/mpmath.js";
import type { Mpc, Mpf } from "../../py/mpmath.js";
import * as ops from "../../py/ops.js";
import { pyRepr, pyStr } from "../../py/repr.js";
import { float, int, isInt, pyEquals, PyDict, PyError, PyFloat, PyOpaque, toDouble, truthy, typeError, typeName } from "../../py/value.js";
import type { Py } from "../../py/value.js";
import { BfclEnvironment } from "../environment.js";
import { has, item, iter } from "../python-access.js";

const result = (value: Py): PyDict => PyDict.of({ result: value });
const error = (message: string): PyDict => PyDict.of({ error: message });

/** `isinstance(value, (int, float))` (bools are ints). */
function isRealNumber(value: Py): boolean {
  return typeof value === "boolean" || isInt(value) || value instanceof PyFloat;
}

/** Run `compute`, turning the listed Python exception types into `fallback`, as a `try/except` would. */
function catching(types: readonly string[], fallback: (e: PyError) => Py, compute: () => Py): Py {
  try {
    return compute();
  } catch (e) {
    if (e instanceof PyError && types.includes(e.type)) return fallback(e);
    throw e;
  }
}

/** Python's `sum(iterable)`: starts from int 0, adds left to right. */
function pySum(values: Py): Py {
  let total: Py = 0;
  for (const value of iter(values)) total = ops.add(total, value);
  return total;
}

/** Python's `min`/`max` on a list: the first extreme element, compared with `<` / `>`. */
function extreme(values: Py, op: "<" | ">"): Py {
  const items = iter(values);
  let best: Py = items[0] as Py;
  for (const candidate of items.slice(1)) if (ops.compare(op, candidate, best)) best = candidate;
  return best;
}

/** Python's `round(number, ndigits)`. */
function pyRound(number: Py, digits: Py): Py {
  if (digits === null) {
    if (number instanceof PyFloat) return int(BigInt(roundFloat(number.value, 0)));
    if (isInt(number) || typeof number === "boolean") return ops.toInt(number);
    throw typeError(`type ${typeName(number)} doesn't define __round__ method`);
  }
  if (!(isInt(digits) || typeof digits === "boolean")) throw typeError(`'${typeName(digits)}' object cannot be interpreted as an integer`);
  const n = Number(ops.toInt(digits));
  if (number instanceof PyFloat) return float(roundFloat(number.value, n));
  if (isInt(number) || typeof number === "boolean") {
    const value = ops.toInt(number);
    if (n >= 0) return value;
    const unit = 10n ** BigInt(-n);
    const big = BigInt(value);
    const q = big / unit;
    const r = big - q * unit;
    let rounded = q;
    const twice = 2n * (r < 0n ? -r : r);
    if (twice > unit || (twice === unit && q % 2n !== 0n)) rounded += big < 0n ? -1n : 1n;
    return int(rounded * unit);
  }
  throw typeError(`type ${typeName(number)} doesn't define __round__ method`);
}

/** mpmath's conversion of a Python value to an exact or context-rounded mpf. */
function toMpf(value: Py, prec: number): Mpf {
  if (typeof value === "boolean") return exact(value ? 1n : 0n, 1n);
  if (isInt(value)) return exact(BigInt(value), 1n);
  if (value instanceof PyFloat) {
    if (!Number.isFinite(value.value)) throw new PyError("ValueError", "infinite or NaN inputs are not supported");
    const [n, d] = rationalOfDouble(value.value);
    return exact(n, d);
  }
  if (typeof value === "string") {
    const match = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(value);
    if (match && (match[2] || match[3])) {
      const digits = BigInt(`${match[2] ?? ""}${match[3] ?? ""}` || "0");
      const scale = Number(match[4] ?? 0) - (match[3]?.length ?? 0);
      const signed = match[1] === "-" ? -digits : digits;
      const [n, d] = scale >= 0 ? [signed * 10n ** BigInt(scale), 1n] : [signed, 10n ** BigInt(-scale)];
      const rounded = div(exact(n, 1n), exact(d, 1n), prec);
      return rounded;
    }
  }
  throw typeError(`cannot create mpf from ${pyRepr(value)}`);
}

function toDecimal(value: Py): Decimal {
  if (typeof value === "boolean") return decimalFromInt(value ? 1n : 0n);
  if (isInt(value)) return decimalFromInt(BigInt(value));
  if (value instanceof PyFloat) return decimalFromDouble(value.value);
  throw typeError(`conversion from ${typeName(value)} to Decimal is not supported`);
}

/** Arithmetic, statistics and unit conversions (upstream `MathAPI`); stateless. */
export class MathAPI extends BfclEnvironment {
  readonly className = "MathAPI";

  override readonly stateless: boolean = true;

  override load(): void {
    // Upstream never loads a scenario into a stateless class.
  }

  override publicState(): Map<string, Py> {
    return new Map();
  }

  constructor(...args: ConstructorParameters<typeof BfclEnvironment>) {
    super(...args);
    this.define("logarithm", ["value", "base", "precision"], (value, base, precision) => this.logarithm(value, base, precision));
    this.define("mean", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot calculate mean of an empty list");
      return catching(["TypeError"], () => error("All elements in the list must be numbers"), () => result(ops.truediv(pySum(numbers), lenOf(numbers))));
    });
    this.define("standard_deviation", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot calculate standard deviation of an empty list");
      return catching(["TypeError"], () => error("All elements in the list must be numbers"), () => {
        const mean = ops.truediv(pySum(numbers), lenOf(numbers));
        const squares = iter(numbers).map((x) => ops.pow(ops.sub(x, mean), 2));
        const variance = ops.truediv(pySum(squares), lenOf(numbers));
        const v = toDouble(variance as PyFloat);
        if (v < 0) throw new PyError("ValueError", "math domain error");
        return result(float(Math.sqrt(v)));
      });
    });
    this.define("si_unit_conversion", ["value", "unit_in", "unit_out"], (value, unitIn, unitOut) => this.siConversion(value, unitIn, unitOut));
    this.define("imperial_si_conversion", ["value", "unit_in", "unit_out"], (value, unitIn, unitOut) => this.imperialConversion(value, unitIn, unitOut));
    this.define("add", ["a", "b"], (a, b) => catching(["TypeError"], () => error("Both inputs must be numbers"), () => result(ops.add(a, b))));
    this.define("subtract", ["a", "b"], (a, b) => catching(["TypeError"], () => error("Both inputs must be numbers"), () => result(ops.sub(a, b))));
    this.define("multiply", ["a", "b"], (a, b) => {
      if (!isRealNumber(a) || !isRealNumber(b)) return error("Both inputs must be numbers");
      return result(ops.mul(a, b));
    });
    this.define("divide", ["a", "b"], (a, b) =>
      catching(["TypeError"], () => error("Both inputs must be numbers"), () => (pyEquals(b, 0) ? error("Cannot divide by zero") : result(ops.truediv(a, b)))),
    );
    this.define("power", ["base", "exponent"], (base, exponent) => catching(["TypeError"], () => error("Both inputs must be numbers"), () => result(ops.pow(base, exponent))));
    this.define("square_root", ["number", "precision"], (number, precision) => this.squareRoot(number, precision));
    this.define("absolute_value", ["number"], (number) => catching(["TypeError"], () => error("Input must be a number"), () => result(ops.abs(number))));
    this.define("round_number", ["number", { name: "decimal_places", default: 0 }], (number, places) =>
      catching(["TypeError"], () => error("First input must be a number, second input must be an integer"), () => result(pyRound(number, places))),
    );
    this.define("percentage", ["part", "whole"], (part, whole) =>
      catching(["TypeError"], () => error("Both inputs must be numbers"), () => (pyEquals(whole, 0) ? error("Whole value cannot be zero") : result(ops.mul(ops.truediv(part, whole), 100)))),
    );
    this.define("min_value", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot find minimum of an empty list");
      return catching(["TypeError"], () => error("All elements in the list must be numbers"), () => result(extreme(numbers, "<")));
    });
    this.define("max_value", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot find maximum of an empty list");
      return catching(["TypeError"], () => error("All elements in the list must be numbers"), () => result(extreme(numbers, ">")));
    });
    this.define("sum_values", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot calculate sum of an empty list");
      return catching(["TypeError"], () => error("All elements in the list must be numbers"), () => result(pySum(numbers)));
    });
  }

  private logarithm(value: Py, base: Py, precision: Py): Py {
    try {
      const dps = Number(ops.toInt(precision));
      const prec = dpsToPrec(dps);
      let quotient: Mpf | Mpc;
      try {
        quotient = divAny(logReal(toMpf(value, prec), prec), logReal(toMpf(base, prec), prec), prec);
      } catch (e) {
        if (e instanceof RangeError) {
          if (e.message === "division by zero") throw new PyError("ZeroDivisionError", "");
          throw new PyError("NotImplementedError", `unsupported logarithm: ${e.message}`);
        }
        throw e;
      }
      return result(new PyOpaque("re" in quotient ? "mpc" : "mpf", mpReprAny(quotient, prec)));
    } catch (e) {
      if (e instanceof PyError) return error(e.message);
      throw e;
    }
  }

  private squareRoot(number: Py, precision: Py): Py {
    return catching(["TypeError", "InvalidOperation"], () => error("Input must be a number or computation resulted in an invalid operation"), () => {
      if (ops.compare("<", number, 0)) return error("Cannot calculate square root of a negative number");
      if (!(isInt(precision) || typeof precision === "boolean")) throw typeError(`'${typeName(precision)}' object cannot be interpreted as an integer`);
      const prec = Number(ops.toInt(precision));
      if (prec < 1) throw new PyError("ValueError", "valid range for prec is [1, MAX_PREC]");
      return result(new PyOpaque("Decimal", decimalRepr(decimalSqrt(toDecimal(number), prec))));
    });
  }

  private siConversion(value: Py, unitIn: Py, unitOut: Py): Py {
    const toMeters = new PyDict([["km", 1000], ["m", 1], ["cm", float(0.01)], ["mm", float(0.001)], ["um", float(1e-6)], ["nm", float(1e-9)]]);
    const fromMeters = new PyDict([...toMeters].map(([unit, factor]) => [unit, ops.truediv(1, factor)]));
    if (!isRealNumber(value)) return error("Value must be a number");
    if (!has(toMeters, unitIn) || !has(fromMeters, unitOut)) return error(`Conversion from '${pyStr(unitIn)}' to '${pyStr(unitOut)}' is not supported`);
    return result(ops.mul(ops.mul(value, item(toMeters, unitIn)), item(fromMeters, unitOut)));
  }

  private imperialConversion(value: Py, unitIn: Py, unitOut: Py): Py {
    const conversion = PyDict.of({
      cm_to_in: float(0.393701),
      in_to_cm: float(2.54),
      m_to_ft: float(3.28084),
      ft_to_m: float(0.3048),
      m_to_yd: float(1.09361),
      yd_to_m: float(0.9144),
      km_to_miles: float(0.621371),
      miles_to_km: float(1.60934),
      kg_to_lb: float(2.20462),
      lb_to_kg: float(0.453592),
      celsius_to_fahrenheit: float(1.8),
      fahrenheit_to_celsius: float(5 / 9),
    });
    if (!isRealNumber(value)) return error("Value must be a number");
    if (pyEquals(unitIn, unitOut)) return result(value);
    const key = `${pyStr(unitIn)}_to_${pyStr(unitOut)}`;
    if (!conversion.has(key)) return error(`Conversion from '${pyStr(unitIn)}' to '${pyStr(unitOut)}' is not supported`);
    const factor = conversion.get(key)!;
    if (unitIn === "celsius" && unitOut === "fahrenheit") return result(ops.add(ops.mul(value, factor), 32));
    if (unitIn === "fahrenheit" && unitOut === "celsius") return result(ops.mul(ops.sub(value, 32), factor));
    return result(ops.mul(value, factor));
  }
}

function lenOf(value: Py): Py {
  return iter(value).length;
}
