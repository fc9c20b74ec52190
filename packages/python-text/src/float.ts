/**
 * How Python writes a float and rounds it to decimals. Both languages print the shortest digits
 * that read back as the same double, but Python switches to exponent notation at other
 * thresholds and always shows a fractional part, and its decimal rounding works on the exact
 * binary value with ties to even (`toFixed` and `Math.round` round ties up).
 */

/**
 * `repr(x)` (and `str(x)`) of a Python float: the shortest round-trip digits, `1.0`, `0.0001`,
 * `1e-05`, `1e+16`, `-0.0`, `inf`, `-inf`, `nan`.
 */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const magnitude = Math.abs(x);
  if (magnitude >= 1e-4 && magnitude < 1e16) {
    // JavaScript writes this range in plain notation too, with the same digits.
    const text = String(x);
    return text.includes(".") ? text : `${text}.0`;
  }
  const sign = x < 0 ? "-" : "";
  const [mantissa, exponentText] = magnitude.toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const exponent = Number(exponentText);
  // The value is 0.DIGITS × 10^point; Python uses exponent notation when point is outside (-4, 16].
  const point = exponent + 1;
  if (point <= -4 || point > 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const power = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${head}e${exponent < 0 ? "-" : "+"}${power}`;
  }
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Python's `f"{x:.{digits}f}"` (also `"%.*f"` and `format(x, ".2f")`): the exact binary value of
 * `x` rounded half to even at `digits` decimals, written out in full, sign kept on zero
 * (`-0.00`).
 */
export function formatFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const scaled = scaledRoundHalfEven(x, digits);
  const negative = x < 0 || Object.is(x, -0);
  const text = (scaled < 0n ? -scaled : scaled).toString().padStart(digits + 1, "0");
  const body = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  return negative ? `-${body}` : body;
}

// CPython's bounds on `ndigits` beyond which `round` has nothing to round (the result is `x`)
// or everything rounds to zero.
const NDIGITS_MAX = 323;
const NDIGITS_MIN = -308;

/**
 * Python's `round(x, ndigits)` for a float: the double nearest to the exact binary value of `x`
 * rounded half to even at `ndigits` decimals (negative `ndigits` round to tens, hundreds, …).
 * `round(2.675, 2)` is `2.67`, `round(0.125, 2)` is `0.12`, `round(-0.001, 2)` is `-0.0`.
 * Where Python raises `OverflowError` (`round(1.7e308, -308)`) this returns `±Infinity`.
 */
export function roundFloat(x: number, ndigits: number): number {
  if (!Number.isFinite(x) || x === 0 || ndigits > NDIGITS_MAX) return x;
  if (ndigits < NDIGITS_MIN) return 0 * x;
  const scaled = scaledRoundHalfEven(x, ndigits);
  if (scaled === 0n) return 0 * x;
  return Number(ndigits >= 0 ? `${scaled}e-${ndigits}` : `${scaled}e${-ndigits}`);
}

/** A finite double as `mantissa × 2^exponent`, exactly (the sign is the mantissa's). */
export function binaryParts(x: number): { mantissa: bigint; exponent: number } {
  if (!Number.isFinite(x)) throw new RangeError(`binaryParts: ${x} is not finite`);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const high = view.getUint32(0);
  const low = view.getUint32(4);
  const biased = (high >>> 20) & 0x7ff;
  let mantissa = (BigInt(high & 0xfffff) << 32n) | BigInt(low);
  let exponent = -1074;
  if (biased !== 0) {
    mantissa |= 1n << 52n;
    exponent = biased - 1075;
  }
  return { mantissa: high >>> 31 === 1 ? -mantissa : mantissa, exponent };
}

/** `n / d` rounded to the nearest integer, ties to even (`d > 0`). */
export function divRoundHalfEven(n: bigint, d: bigint): bigint {
  if (d <= 0n) throw new RangeError("divRoundHalfEven: the divisor must be positive");
  const negative = n < 0n;
  const a = negative ? -n : n;
  let q = a / d;
  const twice = 2n * (a - q * d);
  if (twice > d || (twice === d && q % 2n === 1n)) q += 1n;
  return negative ? -q : q;
}

/** `x × 10^digits` rounded to an integer, ties to even, computed on the exact value of `x`. */
function scaledRoundHalfEven(x: number, digits: number): bigint {
  const { mantissa, exponent } = binaryParts(x);
  let numerator = mantissa;
  let denominator = 1n;
  if (exponent >= 0) numerator <<= BigInt(exponent);
  else denominator <<= BigInt(-exponent);
  if (digits >= 0) numerator *= 10n ** BigInt(digits);
  else denominator *= 10n ** BigInt(-digits);
  return divRoundHalfEven(numerator, denominator);
}
