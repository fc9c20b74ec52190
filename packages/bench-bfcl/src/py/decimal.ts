import { binaryParts, divRoundHalfEven, valueError } from "@envace/python-text";

/**
 * The slice of Python's `decimal` module that BFCL's `MathAPI.square_root` uses: exact
 * conversion of ints and floats, a correctly rounded square root at a context precision
 * (ROUND_HALF_EVEN), and `repr` (`Decimal('1.4142')`).
 */
export interface Decimal {
  readonly negative: boolean;
  /** Coefficient digits (no sign), `"0"` for zero. */
  readonly coefficient: bigint;
  readonly exponent: number;
}

/** `Decimal(x)` for a float: its exact binary value in decimal. */
export function decimalFromDouble(x: number): Decimal {
  if (!Number.isFinite(x)) throw valueError("infinite or NaN Decimal values are not supported");
  const negative = x < 0 || Object.is(x, -0);
  const { mantissa, exponent } = binaryParts(Math.abs(x));
  if (mantissa === 0n) return { negative, coefficient: 0n, exponent: 0 };
  let m = mantissa;
  let e = exponent;
  while ((m & 1n) === 0n && e < 0) {
    m >>= 1n;
    e++;
  }
  if (e >= 0) return { negative, coefficient: m << BigInt(e), exponent: 0 };
  return { negative, coefficient: m * 5n ** BigInt(-e), exponent: e };
}

/** `Decimal(n)` for an int. */
export function decimalFromInt(n: bigint): Decimal {
  return { negative: n < 0n, coefficient: n < 0n ? -n : n, exponent: 0 };
}

function digitCount(n: bigint): number {
  return n === 0n ? 1 : n.toString().length;
}

/** Round to `prec` digits, ties to even (the context's `_fix`, without overflow handling). */
function fix(d: Decimal, prec: number): Decimal {
  let { coefficient, exponent } = d;
  const excess = digitCount(coefficient) - prec;
  if (excess > 0) {
    let q = divRoundHalfEven(coefficient, 10n ** BigInt(excess));
    exponent += excess;
    if (digitCount(q) > prec) {
      q /= 10n;
      exponent += 1;
    }
    coefficient = q;
  }
  return { negative: d.negative, coefficient, exponent };
}

/** `x.sqrt()` at context precision `prec` (x ≥ 0). */
export function decimalSqrt(x: Decimal, prec: number): Decimal {
  if (x.coefficient === 0n) return fix({ negative: x.negative, coefficient: 0n, exponent: Math.floor(x.exponent / 2) }, prec);
  if (x.negative) throw new RangeError("sqrt(-x), x > 0");
  const working = prec + 1;
  const digits = digitCount(x.coefficient);
  let e = x.exponent >> 1;
  let c: bigint;
  let l: number;
  if (x.exponent & 1) {
    c = x.coefficient * 10n;
    l = (digits >> 1) + 1;
  } else {
    c = x.coefficient;
    l = (digits + 1) >> 1;
  }
  const shift = working - l;
  let exactResult: boolean;
  if (shift >= 0) {
    c *= 100n ** BigInt(shift);
    exactResult = true;
  } else {
    const divisor = 100n ** BigInt(-shift);
    exactResult = c % divisor === 0n;
    c /= divisor;
  }
  e -= shift;
  let n = 10n ** BigInt(working);
  for (;;) {
    const q = c / n;
    if (n <= q) break;
    n = (n + q) >> 1n;
  }
  exactResult = exactResult && n * n === c;
  if (exactResult) {
    if (shift >= 0) n /= 10n ** BigInt(shift);
    else n *= 10n ** BigInt(-shift);
    e += shift;
  } else if (n % 5n === 0n) n += 1n;
  return fix({ negative: false, coefficient: n, exponent: e }, prec);
}

/** `str(Decimal)`: scientific notation when the exponent is positive or the number very small. */
export function decimalStr(d: Decimal): string {
  const digits = d.coefficient.toString();
  const adjusted = d.exponent + digits.length - 1;
  const sign = d.negative ? "-" : "";
  if (d.exponent <= 0 && adjusted >= -6) {
    if (d.exponent === 0) return sign + digits;
    const point = digits.length + d.exponent;
    if (point > 0) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
    return `${sign}0.${"0".repeat(-point)}${digits}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}E${adjusted >= 0 ? "+" : ""}${adjusted}`;
}

/** `repr(Decimal)`. */
export function decimalRepr(d: Decimal): string {
  return `Decimal('${decimalStr(d)}')`;
}
