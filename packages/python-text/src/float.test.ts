import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { binaryParts, divRoundHalfEven, floatRepr, formatFixed, roundFloat } from "./float.js";

describe("floatRepr is Python's repr(float)", () => {
  // Left: the double; right: what Python 3 prints for repr() of it.
  it.each<[number, string]>([
    [1, "1.0"],
    [100, "100.0"],
    [0.1, "0.1"],
    [-2.5, "-2.5"],
    [0, "0.0"],
    [-0, "-0.0"],
    [0.30000000000000004, "0.30000000000000004"],
    [12345.678, "12345.678"],
    [123456789.125, "123456789.125"],
    [1e15, "1000000000000000.0"],
    [1234567890123456, "1234567890123456.0"],
    [2 ** 53, "9007199254740992.0"],
    [1e16, "1e+16"],
    [1e22, "1e+22"],
    [2 ** 63, "9.223372036854776e+18"],
    [1.2345678901234568e17, "1.2345678901234568e+17"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [0.001, "0.001"],
    [1e-4, "0.0001"],
    [1e-5, "1e-05"],
    [1.5e-7, "1.5e-07"],
    [5e-324, "5e-324"],
    [Infinity, "inf"],
    [-Infinity, "-inf"],
    [NaN, "nan"],
  ])("repr(%s) is %s", (x, text) => {
    expect(floatRepr(x)).toBe(text);
  });

  it("reads back as the same double, and always shows it is a float", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = floatRepr(x);
        return Object.is(Number(text), x) && /[.en]/.test(text);
      }),
    );
  });

  it("keeps JavaScript's shortest digits, in Python's notation", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const digits = (text: string) => text.replace(/^-/, "").replace(/e.*$/, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "");
        return digits(floatRepr(x)) === digits(x.toExponential());
      }),
    );
  });
});

describe('formatFixed is Python\'s f"{x:.nf}"', () => {
  // Python rounds the exact binary value half to even; 2.675 is stored as 2.67499999…
  it.each<[number, number, string]>([
    [0.125, 2, "0.12"],
    [0.375, 2, "0.38"],
    [2.675, 2, "2.67"],
    [1.005, 2, "1.00"],
    [0.05, 1, "0.1"],
    [123.456, 1, "123.5"],
    [1024, 2, "1024.00"],
    [2.5, 0, "2"],
    [3.5, 0, "4"],
    [0.5, 0, "0"],
    [-1.5, 0, "-2"],
    [-0.5, 0, "-0"],
    [-0.001, 2, "-0.00"],
    [-0, 1, "-0.0"],
    [1e-10, 12, "0.000000000100"],
    [5e-324, 3, "0.000"],
    [1e22, 2, "10000000000000000000000.00"],
    [NaN, 2, "nan"],
    [-Infinity, 2, "-inf"],
  ])("f'{%s:.%sf}' is %s", (x, digits, text) => {
    expect(formatFixed(x, digits)).toBe(text);
  });

  it("agrees with toFixed except on exact ties, which toFixed rounds away from zero", () => {
    expect((0.125).toFixed(2)).toBe("0.13");
    const isTie = (x: number, digits: number): boolean => {
      const { mantissa, exponent } = binaryParts(Math.abs(x));
      if (exponent >= 0) return false;
      const twice = mantissa * 10n ** BigInt(digits) * 2n;
      const unit = 1n << BigInt(-exponent);
      return twice % unit === 0n && (twice / unit) % 2n === 1n;
    };
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, min: -1e20, max: 1e20 }).filter((x) => !Object.is(x, -0)),
        fc.integer({ min: 0, max: 10 }),
        (x, digits) => isTie(x, digits) || formatFixed(x, digits) === x.toFixed(digits),
      ),
    );
  });
});

describe("roundFloat is Python's round(x, ndigits) for a float", () => {
  it.each<[number, number, number]>([
    [0.125, 2, 0.12],
    [0.375, 2, 0.38],
    [-0.125, 2, -0.12],
    [2.675, 2, 2.67],
    [1.005, 2, 1],
    [1819.925, 2, 1819.92],
    [342.81 - 0.005, 2, 342.81],
    [0.1 + 0.2, 15, 0.3],
    [2.5, 0, 2],
    [1.5, 0, 2],
    [0.5, 0, 0],
    [1234.5678, -2, 1200],
    [1250, -2, 1200],
    [1350, -2, 1400],
    [2 ** 70, -3, 1.1805916207174113e21],
    [5e-324, 323, 0],
    [5e-324, 324, 5e-324],
    [1e300, -400, 0],
  ])("round(%s, %s) is %s", (x, ndigits, rounded) => {
    expect(roundFloat(x, ndigits)).toBe(rounded);
  });

  it("keeps the sign of a result that rounds to zero", () => {
    expect(Object.is(roundFloat(-0.001, 2), -0)).toBe(true);
    expect(Object.is(roundFloat(-0.5, 0), -0)).toBe(true);
    expect(Object.is(roundFloat(-1e300, -309), -0)).toBe(true);
    expect(Object.is(roundFloat(-0, 2), -0)).toBe(true);
  });

  it("returns non-finite values unchanged, and Infinity where Python overflows", () => {
    expect(roundFloat(Infinity, 2)).toBe(Infinity);
    expect(roundFloat(NaN, 2)).toBeNaN();
    expect(roundFloat(1.7976931348623157e308, -308)).toBe(Infinity);
  });

  it("is the formatted decimal read back as a double", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }), fc.integer({ min: 0, max: 8 }), (x, digits) =>
        Object.is(roundFloat(x, digits), Number(formatFixed(x, digits))),
      ),
    );
  });
});

describe("the exact arithmetic underneath", () => {
  it("splits a double into mantissa × 2^exponent exactly", () => {
    expect(binaryParts(1)).toEqual({ mantissa: 1n << 52n, exponent: -52 });
    // -0.1 is -0x1.999999999999ap-4.
    expect(binaryParts(-0.1)).toEqual({ mantissa: -0x1999999999999an, exponent: -56 });
    expect(binaryParts(5e-324)).toEqual({ mantissa: 1n, exponent: -1074 });
    expect(binaryParts(0)).toEqual({ mantissa: 0n, exponent: -1074 });
    expect(() => binaryParts(Infinity)).toThrow(RangeError);
  });

  it("rounds a quotient half to even in both signs", () => {
    expect([5n, 15n, 25n, 7n, 3n].map((n) => divRoundHalfEven(n, 10n))).toEqual([0n, 2n, 2n, 1n, 0n]);
    expect([-5n, -15n, -25n, -7n].map((n) => divRoundHalfEven(n, 10n))).toEqual([-0n, -2n, -2n, -1n]);
    expect(() => divRoundHalfEven(1n, 0n)).toThrow(RangeError);
  });
});
