import { binaryParts, divRoundHalfEven, roundFloat } from "@envace/python-text";
/**
 * The slice of `mpmath` that BFCL's `MathAPI.logarithm` uses: binary floating point numbers of
 * a chosen precision, a correctly rounded natural logarithm and quotient, and mpmath's
 * decimal printing (`mpf('1.3027')`), whose digit count follows the working precision.
 */
export type Mpf =
  | { readonly kind: "finite"; readonly negative: boolean; readonly man: bigint; readonly exp: number }
  | { readonly kind: "zero" }
  | { readonly kind: "inf"; readonly negative: boolean }
  | { readonly kind: "nan" };

const LOG2_10 = 3.3219280948873626;

/** mpmath's `dps_to_prec`: bits for `dps` decimal digits. */
export function dpsToPrec(dps: number): number {
  return Math.max(1, roundFloat((dps + 1) * LOG2_10, 0));
}

/** mpmath's `prec_to_dps`. */
export function precToDps(prec: number): number {
  return Math.max(1, roundFloat(prec / LOG2_10, 0) - 1);
}

/** mpmath's `repr_dps`: digits `repr` shows at a precision. */
export function reprDps(prec: number): number {
  const dps = precToDps(prec);
  return dps === 15 ? 17 : dps + 3;
}

function bitLength(n: bigint): number {
  return n === 0n ? 0 : n.toString(2).length;
}

/**
 * The exact rational `n / d` (d > 0) rounded to `prec` bits: to nearest with ties to even, or
 * toward zero (`down`, mpmath's `round_fast` for intermediate sums).
 */
export function fromRational(n: bigint, d: bigint, prec: number, mode: "nearest" | "down" = "nearest"): Mpf {
  if (n === 0n) return { kind: "zero" };
  const negative = n < 0n;
  const a = negative ? -n : n;
  // Scale so that the quotient has at least prec + 2 bits before rounding.
  const shift = prec + 2 - (bitLength(a) - bitLength(d));
  const num = shift >= 0 ? a << BigInt(shift) : a;
  const den = shift >= 0 ? d : d << BigInt(-shift);
  const q = num / den;
  const extra = bitLength(q) - prec;
  const man = mode === "down" ? num / (den << BigInt(extra)) : divRoundHalfEven(num, den << BigInt(extra));
  return normalize(negative, man, extra - shift);
}

function normalize(negative: boolean, man: bigint, exp: number): Mpf {
  if (man === 0n) return { kind: "zero" };
  let m = man;
  let e = exp;
  while ((m & 1n) === 0n) {
    m >>= 1n;
    e++;
  }
  return { kind: "finite", negative, man: m, exp: e };
}

/** An exact number (a float's value, or an integer) as a rational. */
export function rationalOfDouble(x: number): [bigint, bigint] {
  const { mantissa, exponent } = binaryParts(x);
  return exponent >= 0 ? [mantissa << BigInt(exponent), 1n] : [mantissa, 1n << BigInt(-exponent)];
}

/** `mpf` for an exact rational input (mpmath converts ints and floats losslessly). */
export function exact(n: bigint, d: bigint): Mpf {
  return fromRational(n, d, Math.max(bitLength(n < 0n ? -n : n), 1) + bitLength(d) + 2);
}

export function toRational(x: Extract<Mpf, { kind: "finite" }>): [bigint, bigint] {
  const m = x.negative ? -x.man : x.man;
  return x.exp >= 0 ? [m << BigInt(x.exp), 1n] : [m, 1n << BigInt(-x.exp)];
}

/** `log(x)` rounded to `prec` bits; a negative input would be complex and is refused. */
export function log(x: Mpf, prec: number): Mpf {
  switch (x.kind) {
    case "zero":
      return { kind: "inf", negative: true };
    case "nan":
      return x;
    case "inf":
      if (x.negative) throw new RangeError("logarithm of a negative number");
      return x;
    case "finite": {
      if (x.negative) throw new RangeError("logarithm of a negative number");
      const [n, d] = toRational(x);
      if (n === d) return { kind: "zero" };
      return logRounded(n, d, prec);
    }
  }
}

/**
 * ln(n/d) rounded to `prec` bits. The logarithm is computed in fixed point with an error bound;
 * the working precision grows until the bound no longer straddles a rounding boundary (ln of a
 * rational other than 1 is irrational, so this ends).
 */
function logRounded(n: bigint, d: bigint, prec: number): Mpf {
  for (let guard = 64; ; guard *= 2) {
    const bits = prec + guard + bitLength(n) + bitLength(d);
    const { value, error } = lnFixed(n, d, bits);
    const low = roundFixed(value - error, bits, prec);
    const high = roundFixed(value + error, bits, prec);
    if (sameMpf(low, high)) return low;
  }
}

function sameMpf(a: Mpf, b: Mpf): boolean {
  if (a.kind !== "finite" || b.kind !== "finite") return a.kind === b.kind;
  return a.negative === b.negative && a.man === b.man && a.exp === b.exp;
}

/** `value / 2^bits` rounded to `prec` bits. */
function roundFixed(value: bigint, bits: number, prec: number): Mpf {
  return fromRational(value, 1n << BigInt(bits), prec);
}

/** ln(n/d) × 2^bits, with an absolute error bound in the same units. */
function lnFixed(n: bigint, d: bigint, bits: number): { value: bigint; error: bigint } {
  // n/d = y × 2^k with y in [1, 2).
  let k = bitLength(n) - bitLength(d);
  const scaledD = (): bigint => (k >= 0 ? d << BigInt(k) : d);
  const scaledN = (): bigint => (k >= 0 ? n : n << BigInt(-k));
  if (scaledN() < scaledD()) k--;
  const num = scaledN() - scaledD();
  const den = scaledN() + scaledD();
  const lnY = atanhSeries((num << BigInt(bits)) / den, bits);
  const ln2 = atanhSeries((1n << BigInt(bits)) / 3n, bits);
  const value = 2n * lnY.value + BigInt(k) * 2n * ln2.value;
  const error = 2n * lnY.error + BigInt(Math.abs(k) + 1) * 2n * ln2.error + 4n;
  return { value, error };
}

/** atanh(t) × 2^bits for t = T / 2^bits in [0, 1/3], with its error bound. */
function atanhSeries(t: bigint, bits: number): { value: bigint; error: bigint } {
  const one = BigInt(bits);
  const t2 = (t * t) >> one;
  let power = t;
  let sum = t;
  let terms = 1n;
  for (let i = 3n; power !== 0n; i += 2n) {
    power = (power * t2) >> one;
    sum += power / i;
    terms++;
  }
  return { value: sum, error: 2n * terms + 2n };
}

/** `a / b` rounded to `prec` bits (mpmath raises a bare `ZeroDivisionError` for b = 0). */
export function div(a: Mpf, b: Mpf, prec: number): Mpf {
  if (a.kind === "nan" || b.kind === "nan") return { kind: "nan" };
  if (b.kind === "zero") throw new RangeError("division by zero");
  if (a.kind === "inf") {
    if (b.kind === "inf") return { kind: "nan" };
    return { kind: "inf", negative: a.negative !== b.negative };
  }
  if (a.kind === "zero" || b.kind === "inf") return { kind: "zero" };
  const [an, ad] = toRational(a);
  const [bn, bd] = toRational(b);
  const n = an * bd;
  const d = ad * bn;
  return d < 0n ? fromRational(-n, -d, prec) : fromRational(n, d, prec);
}

/** mpmath's `to_str(x, dps)`. */
export function toStr(x: Mpf, dps: number): string {
  switch (x.kind) {
    case "zero":
      return "0.0";
    case "nan":
      return "nan";
    case "inf":
      return x.negative ? "-inf" : "+inf";
    case "finite":
      break;
  }
  const minFixed = Math.min(-Math.floor(dps / 3), -5);
  const maxFixed = dps;
  let { digits, exponent } = toDigitsExp(x, dps + 3);
  if (digits.length > dps && "56789".includes(digits[dps]!)) {
    digits = digits.slice(0, dps);
    let i = dps - 1;
    while (i >= 0 && digits[i] === "9") i--;
    if (i >= 0) digits = digits.slice(0, i) + String(Number(digits[i]) + 1) + "0".repeat(dps - i - 1);
    else {
      digits = `1${"0".repeat(dps - 1)}`;
      exponent++;
    }
  } else digits = digits.slice(0, dps);
  let split = 1;
  if (minFixed < exponent && exponent < maxFixed) {
    if (exponent < 0) digits = "0".repeat(-exponent) + digits;
    else {
      split = exponent + 1;
      if (split > dps) digits += "0".repeat(split - dps);
    }
    exponent = 0;
  }
  digits = `${digits.slice(0, split)}.${digits.slice(split)}`;
  let end = digits.length;
  while (digits[end - 1] === "0") end--;
  digits = digits.slice(0, end);
  if (digits.endsWith(".")) digits += "0";
  const sign = x.negative ? "-" : "";
  if (exponent === 0) return sign + digits;
  return exponent > 0 ? `${sign}${digits}e+${exponent}` : `${sign}${digits}e${exponent}`;
}

/** mpmath's `to_digits_exp`: decimal digits (truncated) and the decimal exponent. */
function toDigitsExp(x: Extract<Mpf, { kind: "finite" }>, dps: number): { digits: string; exponent: number } {
  const bc = bitLength(x.man);
  const bitprec = Math.trunc(dps * LOG2_10) + 10;
  const fixprec = Math.max(bitprec - x.exp - bc, 0);
  const fixdps = Math.trunc(fixprec / LOG2_10 + 0.5);
  const offset = x.exp + fixprec;
  const fixed = offset >= 0 ? x.man << BigInt(offset) : x.man >> BigInt(-offset);
  const scaled = (fixed * 10n ** BigInt(fixdps)) >> BigInt(fixprec);
  const digits = scaled.toString();
  return { digits, exponent: digits.length - fixdps - 1 };
}

/** `repr(mpf)` at a working precision. */
export function mpfRepr(x: Mpf, prec: number): string {
  return `mpf('${toStr(x, reprDps(prec))}')`;
}

/** A complex value: mpmath's `mpc`. */
export interface Mpc {
  readonly re: Mpf;
  readonly im: Mpf;
}

let piCache: { bits: number; value: bigint } | undefined;

/** π × 2^bits (truncated), by Machin's formula, with an error below 8 units. */
function piFixed(bits: number): bigint {
  if (piCache && piCache.bits >= bits) return piCache.value >> BigInt(piCache.bits - bits);
  const guard = bits + 16;
  const one = 1n << BigInt(guard);
  const arctanInverse = (x: bigint): bigint => {
    const x2 = x * x;
    let power = one / x;
    let sum = power;
    for (let k = 3n, sign = -1n; power !== 0n; k += 2n, sign = -sign) {
      power /= x2;
      sum += (sign * power) / k;
    }
    return sum;
  };
  const value = (16n * arctanInverse(5n) - 4n * arctanInverse(239n)) >> 16n;
  piCache = { bits, value };
  return value;
}

/** π rounded to `prec` bits (π is irrational: widen until the rounding is certain). */
function pi(prec: number): Mpf {
  for (let guard = 32; ; guard *= 2) {
    const bits = prec + guard;
    const value = piFixed(bits);
    const low = roundFixed(value - 8n, bits, prec);
    if (sameMpf(low, roundFixed(value + 8n, bits, prec))) return low;
  }
}

/** `mpmath.log(x)`: real for x ≥ 0, complex (log|x| + πi) for x < 0. */
export function logReal(x: Mpf, prec: number): Mpf | Mpc {
  if (x.kind === "finite" && x.negative) return { re: log({ ...x, negative: false }, prec), im: pi(prec) };
  return log(x, prec);
}

function isComplex(x: Mpf | Mpc): x is Mpc {
  return "re" in x;
}

function exactProduct(a: Mpf, b: Mpf): [bigint, bigint] {
  if (a.kind !== "finite" || b.kind !== "finite") {
    if (a.kind === "zero" || b.kind === "zero") return [0n, 1n];
    throw new RangeError("non-finite operand");
  }
  const [an, ad] = toRational(a);
  const [bn, bd] = toRational(b);
  return [an * bn, ad * bd];
}

/** `x + y` of exact rationals rounded toward zero at `prec` bits (mpmath's `mpf_add(…, wp)`). */
function sumDown(x: [bigint, bigint], y: [bigint, bigint], prec: number, sign: 1n | -1n): Mpf {
  const n = x[0] * y[1] + sign * y[0] * x[1];
  return fromRational(n, x[1] * y[1], prec, "down");
}

/** mpmath's division of reals and complexes, with its intermediate precision and rounding. */
export function divAny(a: Mpf | Mpc, b: Mpf | Mpc, prec: number): Mpf | Mpc {
  if (!isComplex(a) && !isComplex(b)) return div(a, b, prec);
  if (isComplex(a) && !isComplex(b)) return { re: div(a.re, b, prec), im: div(a.im, b, prec) };
  const z: Mpc = isComplex(a) ? a : { re: a, im: { kind: "zero" } };
  const w = b as Mpc;
  const wp = prec + 10;
  const mag = sumDown(exactProduct(w.re, w.re), exactProduct(w.im, w.im), wp, 1n);
  const t = sumDown(exactProduct(z.re, w.re), exactProduct(z.im, w.im), wp, 1n);
  const u = sumDown(exactProduct(z.im, w.re), exactProduct(z.re, w.im), wp, -1n);
  return { re: div(t, mag, prec), im: div(u, mag, prec) };
}

/** `repr` of an mpf or mpc at a working precision. */
export function mpReprAny(x: Mpf | Mpc, prec: number): string {
  if (!isComplex(x)) return mpfRepr(x, prec);
  const digits = reprDps(prec);
  return `mpc(real='${toStr(x.re, digits)}', imag='${toStr(x.im, digits)}')`;
}
