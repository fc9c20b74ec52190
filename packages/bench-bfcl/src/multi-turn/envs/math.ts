import {
  iterate,
  len,
  operator,
  pyEquals,
  PyException,
  PyHashDict,
  pyInt,
  type PyObject,
  PyOpaque,
  pyRepr,
  pyStr,
  pyTypeName,
  roundFloat,
  truthy,
  typeError,
  valueError,
} from "@envace/python-text";
import { decimalFromDouble, decimalFromInt, decimalRepr, decimalSqrt } from "../../py/decimal.js";
import type { Decimal } from "../../py/decimal.js";
import { div, divAny, dpsToPrec, exact, logReal, mpReprAny, rationalOfDouble } from "../../py/mpmath.js";
import type { Mpc, Mpf } from "../../py/mpmath.js";
import { BfclEnvironment } from "../environment.js";

const result = (value: PyObject): PyHashDict => PyHashDict.of({ result: value });
const error = (message: string): PyHashDict => PyHashDict.of({ error: message });

/** `isinstance(value, (int, float))` (bools are ints). */
function isRealNumber(value: PyObject): value is boolean | bigint | number {
  return typeof value === "boolean" || typeof value === "bigint" || typeof value === "number";
}

/** `isinstance(value, int)`, bools included. */
function isInteger(value: PyObject): value is boolean | bigint {
  return typeof value === "boolean" || typeof value === "bigint";
}

/** Run `compute`, turning the listed Python exception types into `fallback`, as a `try/except` would. */
function catching(types: readonly string[], fallback: (e: PyException) => PyObject, compute: () => PyObject): PyObject {
  try {
    return compute();
  } catch (e) {
    if (e instanceof PyException && types.includes(e.pyType)) return fallback(e);
    throw e;
  }
}

/** Python's `sum(iterable)`: starts from int 0, adds left to right. */
function pySum(values: PyObject): PyObject {
  let total: PyObject = 0n;
  for (const value of iterate(values)) total = operator.add(total, value);
  return total;
}

/** Python's `min`/`max` on a list: the first extreme element, compared with `<` / `>`. */
function extreme(values: PyObject, better: (a: PyObject, b: PyObject) => boolean): PyObject {
  const items = iterate(values);
  let best: PyObject = items[0] as PyObject;
  for (const candidate of items.slice(1)) if (better(candidate, best)) best = candidate;
  return best;
}

/** Python's `round(number, ndigits)`. */
function pyRound(number: PyObject, digits: PyObject): PyObject {
  if (digits === null) {
    if (typeof number === "number") return pyInt(roundFloat(number, 0));
    if (isInteger(number)) return pyInt(number);
    throw typeError(`type ${pyTypeName(number)} doesn't define __round__ method`);
  }
  if (!isInteger(digits)) throw typeError(`'${pyTypeName(digits)}' object cannot be interpreted as an integer`);
  const n = Number(pyInt(digits));
  if (typeof number === "number") return roundFloat(number, n);
  if (isInteger(number)) {
    const value = pyInt(number);
    if (n >= 0) return value;
    const unit = 10n ** BigInt(-n);
    const q = value / unit;
    const r = value - q * unit;
    let rounded = q;
    const twice = 2n * (r < 0n ? -r : r);
    if (twice > unit || (twice === unit && q % 2n !== 0n)) rounded += value < 0n ? -1n : 1n;
    return rounded * unit;
  }
  throw typeError(`type ${pyTypeName(number)} doesn't define __round__ method`);
}

/** mpmath's conversion of a Python value to an exact or context-rounded mpf. */
function toMpf(value: PyObject, prec: number): Mpf {
  if (isInteger(value)) return exact(pyInt(value), 1n);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw valueError("infinite or NaN inputs are not supported");
    const [n, d] = rationalOfDouble(value);
    return exact(n, d);
  }
  if (typeof value === "string") {
    const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(value.trim());
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

function toDecimal(value: PyObject): Decimal {
  if (isInteger(value)) return decimalFromInt(pyInt(value));
  if (typeof value === "number") return decimalFromDouble(value);
  throw typeError(`conversion from ${pyTypeName(value)} to Decimal is not supported`);
}

/** Arithmetic, statistics and unit conversions (upstream `MathAPI`); stateless. */
export class MathAPI extends BfclEnvironment {
  readonly className = "MathAPI";

  override readonly stateless: boolean = true;

  override load(): void {
    // Upstream never loads a scenario into a stateless class.
  }

  override publicState(): Map<string, PyObject> {
    return new Map();
  }

  constructor(...args: ConstructorParameters<typeof BfclEnvironment>) {
    super(...args);
    this.define("logarithm", ["value", "base", "precision"], (value, base, precision) => this.logarithm(value, base, precision));
    this.define("mean", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot calculate mean of an empty list");
      return catching(
        ["TypeError"],
        () => error("All elements in the list must be numbers"),
        () => result(operator.truediv(pySum(numbers), lenOf(numbers))),
      );
    });
    this.define("standard_deviation", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot calculate standard deviation of an empty list");
      return catching(
        ["TypeError"],
        () => error("All elements in the list must be numbers"),
        () => {
          const mean = operator.truediv(pySum(numbers), lenOf(numbers));
          const squares = iterate(numbers).map((x) => operator.pow(operator.sub(x, mean), 2n));
          const variance = Number(operator.truediv(pySum(squares), lenOf(numbers)));
          if (variance < 0) throw valueError("math domain error");
          return result(Math.sqrt(variance));
        },
      );
    });
    this.define("si_unit_conversion", ["value", "unit_in", "unit_out"], (value, unitIn, unitOut) => this.siConversion(value, unitIn, unitOut));
    this.define("imperial_si_conversion", ["value", "unit_in", "unit_out"], (value, unitIn, unitOut) => this.imperialConversion(value, unitIn, unitOut));
    this.define("add", ["a", "b"], (a, b) =>
      catching(
        ["TypeError"],
        () => error("Both inputs must be numbers"),
        () => result(operator.add(a, b)),
      ),
    );
    this.define("subtract", ["a", "b"], (a, b) =>
      catching(
        ["TypeError"],
        () => error("Both inputs must be numbers"),
        () => result(operator.sub(a, b)),
      ),
    );
    this.define("multiply", ["a", "b"], (a, b) => {
      if (!isRealNumber(a) || !isRealNumber(b)) return error("Both inputs must be numbers");
      return result(operator.mul(a, b));
    });
    this.define("divide", ["a", "b"], (a, b) =>
      catching(
        ["TypeError"],
        () => error("Both inputs must be numbers"),
        () => (pyEquals(b, 0n) ? error("Cannot divide by zero") : result(operator.truediv(a, b))),
      ),
    );
    this.define("power", ["base", "exponent"], (base, exponent) =>
      catching(
        ["TypeError"],
        () => error("Both inputs must be numbers"),
        () => result(operator.pow(base, exponent)),
      ),
    );
    this.define("square_root", ["number", "precision"], (number, precision) => this.squareRoot(number, precision));
    this.define("absolute_value", ["number"], (number) =>
      catching(
        ["TypeError"],
        () => error("Input must be a number"),
        () => result(operator.abs(number)),
      ),
    );
    this.define("round_number", ["number", { name: "decimal_places", default: 0n }], (number, places) =>
      catching(
        ["TypeError"],
        () => error("First input must be a number, second input must be an integer"),
        () => result(pyRound(number, places)),
      ),
    );
    this.define("percentage", ["part", "whole"], (part, whole) =>
      catching(
        ["TypeError"],
        () => error("Both inputs must be numbers"),
        () => (pyEquals(whole, 0n) ? error("Whole value cannot be zero") : result(operator.mul(operator.truediv(part, whole), 100n))),
      ),
    );
    this.define("min_value", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot find minimum of an empty list");
      return catching(
        ["TypeError"],
        () => error("All elements in the list must be numbers"),
        () => result(extreme(numbers, operator.lt)),
      );
    });
    this.define("max_value", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot find maximum of an empty list");
      return catching(
        ["TypeError"],
        () => error("All elements in the list must be numbers"),
        () => result(extreme(numbers, operator.gt)),
      );
    });
    this.define("sum_values", ["numbers"], (numbers) => {
      if (!truthy(numbers)) return error("Cannot calculate sum of an empty list");
      return catching(
        ["TypeError"],
        () => error("All elements in the list must be numbers"),
        () => result(pySum(numbers)),
      );
    });
  }

  private logarithm(value: PyObject, base: PyObject, precision: PyObject): PyObject {
    try {
      const dps = Number(pyInt(precision));
      const prec = dpsToPrec(dps);
      let quotient: Mpf | Mpc;
      try {
        quotient = divAny(logReal(toMpf(value, prec), prec), logReal(toMpf(base, prec), prec), prec);
      } catch (e) {
        if (e instanceof RangeError) {
          if (e.message === "division by zero") throw new PyException("ZeroDivisionError", "");
          throw new PyException("NotImplementedError", `unsupported logarithm: ${e.message}`);
        }
        throw e;
      }
      return result(new PyOpaque("re" in quotient ? "mpc" : "mpf", mpReprAny(quotient, prec)));
    } catch (e) {
      if (e instanceof PyException) return error(e.text);
      throw e;
    }
  }

  private squareRoot(number: PyObject, precision: PyObject): PyObject {
    return catching(
      ["TypeError", "InvalidOperation"],
      () => error("Input must be a number or computation resulted in an invalid operation"),
      () => {
        if (operator.lt(number, 0n)) return error("Cannot calculate square root of a negative number");
        if (!isInteger(precision)) throw typeError(`'${pyTypeName(precision)}' object cannot be interpreted as an integer`);
        const prec = Number(pyInt(precision));
        if (prec < 1) throw valueError("valid range for prec is [1, MAX_PREC]");
        return result(new PyOpaque("Decimal", decimalRepr(decimalSqrt(toDecimal(number), prec))));
      },
    );
  }

  private siConversion(value: PyObject, unitIn: PyObject, unitOut: PyObject): PyObject {
    const toMeters = new PyHashDict([
      ["km", 1000n],
      ["m", 1n],
      ["cm", 0.01],
      ["mm", 0.001],
      ["um", 1e-6],
      ["nm", 1e-9],
    ]);
    const fromMeters = new PyHashDict([...toMeters].map(([unit, factor]) => [unit, operator.truediv(1n, factor)]));
    if (!isRealNumber(value)) return error("Value must be a number");
    if (!operator.contains(toMeters, unitIn) || !operator.contains(fromMeters, unitOut))
      return error(`Conversion from '${pyStr(unitIn)}' to '${pyStr(unitOut)}' is not supported`);
    return result(operator.mul(operator.mul(value, operator.getitem(toMeters, unitIn)), operator.getitem(fromMeters, unitOut)));
  }

  private imperialConversion(value: PyObject, unitIn: PyObject, unitOut: PyObject): PyObject {
    const conversion = PyHashDict.of({
      cm_to_in: 0.393701,
      in_to_cm: 2.54,
      m_to_ft: 3.28084,
      ft_to_m: 0.3048,
      m_to_yd: 1.09361,
      yd_to_m: 0.9144,
      km_to_miles: 0.621371,
      miles_to_km: 1.60934,
      kg_to_lb: 2.20462,
      lb_to_kg: 0.453592,
      celsius_to_fahrenheit: 1.8,
      fahrenheit_to_celsius: 5 / 9,
    });
    if (!isRealNumber(value)) return error("Value must be a number");
    if (pyEquals(unitIn, unitOut)) return result(value);
    const key = `${pyStr(unitIn)}_to_${pyStr(unitOut)}`;
    if (!conversion.has(key)) return error(`Conversion from '${pyStr(unitIn)}' to '${pyStr(unitOut)}' is not supported`);
    const factor = conversion.get(key)!;
    if (unitIn === "celsius" && unitOut === "fahrenheit") return result(operator.add(operator.mul(value, factor), 32n));
    if (unitIn === "fahrenheit" && unitOut === "celsius") return result(operator.mul(operator.sub(value, 32n), factor));
    return result(operator.mul(value, factor));
  }
}

/** `len(value)` as a Python int. */
function lenOf(value: PyObject): PyObject {
  return BigInt(len(value));
}
