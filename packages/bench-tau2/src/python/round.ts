/**
 * Python's `round(x, ndigits)` for floats: the exact binary value of `x` rounded to `ndigits`
 * decimals, ties to even, read back as the nearest float. JavaScript's `toFixed` rounds ties
 * away from zero (`round(0.125, 2)` is `0.12` in Python, `(0.125).toFixed(2)` is `"0.13"`).
 */
export function pyRound(x: number, ndigits: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const { mantissa, exponent } = decompose(Math.abs(x));
  const scale = 10n ** BigInt(ndigits);
  let digits: bigint;
  if (exponent >= 0) {
    digits = (mantissa << BigInt(exponent)) * scale;
  } else {
    const numerator = mantissa * scale;
    const denominator = 1n << BigInt(-exponent);
    const quotient = numerator / denominator;
    const twice = (numerator % denominator) * 2n;
    digits = twice > denominator || (twice === denominator && quotient % 2n === 1n) ? quotient + 1n : quotient;
  }
  const text = digits.toString().padStart(ndigits + 1, "0");
  const decimal = ndigits > 0 ? `${text.slice(0, -ndigits)}.${text.slice(-ndigits)}` : text;
  return Number(`${x < 0 ? "-" : ""}${decimal}`);
}

/** `x = mantissa × 2^exponent` exactly, for a finite positive double. */
function decompose(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const high = view.getUint32(0);
  const low = view.getUint32(4);
  const biased = (high >>> 20) & 0x7ff;
  const fraction = (BigInt(high & 0xfffff) << 32n) | BigInt(low);
  if (biased === 0) return { mantissa: fraction, exponent: -1074 };
  return { mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}
