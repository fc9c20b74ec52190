/**
 * Python's number formatting, which differs from JavaScript's: `repr(float)` switches to
 * exponent notation at other thresholds and always shows a fractional part, and fixed-point
 * formatting rounds the exact binary value half to even (JS `toFixed` rounds ties up).
 */

/** `repr(x)` of a Python float. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mantissa, exp] = Math.abs(x).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  // Position of the decimal point relative to the digits: value = 0.DIGITS × 10^decpt.
  const decpt = Number(exp) + 1;
  if (decpt <= -4 || decpt > 16) {
    const rest = digits.slice(1);
    const e = decpt - 1;
    const expText = `${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
    return `${sign}${digits[0]}${rest ? `.${rest}` : ""}e${expText}`;
  }
  if (decpt <= 0) return `${sign}0.${"0".repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${"0".repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

/** A finite double as `mantissa × 2^exponent`, exactly. */
export function decompose(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const negative = hi >>> 31 === 1;
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exponent: number;
  if (biased === 0) exponent = -1074;
  else {
    mantissa |= 1n << 52n;
    exponent = biased - 1075;
  }
  return { mantissa: negative ? -mantissa : mantissa, exponent };
}

/**
 * `round(x × 10^digits)` of the exact value of `x`, ties to even, as a bigint. `digits` may be
 * negative.
 */
export function scaledRoundHalfEven(x: number, digits: number): bigint {
  const { mantissa, exponent } = decompose(x);
  let numerator = mantissa;
  let denominator = 1n;
  if (exponent >= 0) numerator <<= BigInt(exponent);
  else denominator <<= BigInt(-exponent);
  if (digits >= 0) numerator *= 10n ** BigInt(digits);
  else denominator *= 10n ** BigInt(-digits);
  return divRoundHalfEven(numerator, denominator);
}

/** `n / d` rounded half to even (d > 0). */
export function divRoundHalfEven(n: bigint, d: bigint): bigint {
  const negative = n < 0n;
  const a = negative ? -n : n;
  let q = a / d;
  const r = a - q * d;
  const twice = 2n * r;
  if (twice > d || (twice === d && q % 2n === 1n)) q += 1n;
  return negative ? -q : q;
}

/** Python `f"{x:.{digits}f}"` for a float. */
export function formatFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const scaled = scaledRoundHalfEven(x, digits);
  const negative = scaled < 0n || (scaled === 0n && (x < 0 || Object.is(x, -0)));
  const text = (scaled < 0n ? -scaled : scaled).toString().padStart(digits + 1, "0");
  const body = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  return negative ? `-${body}` : body;
}

/** Python `round(x, digits)` for a float: the double nearest the correctly rounded decimal. */
export function roundFloat(x: number, digits: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const scaled = scaledRoundHalfEven(x, digits);
  if (scaled === 0n) return x < 0 ? -0 : 0;
  const result = digits >= 0 ? Number(`${scaled}e-${digits}`) : Number(`${scaled}e${-digits}`);
  return result;
}
