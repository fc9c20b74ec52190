import { describe, expect, it } from "vitest";
import { pyFloat, pyInt } from "./convert.js";
import { exceptionText } from "./errors.js";
import { PyHashDict, PySet, PyTuple } from "./objects.js";
import * as operator from "./operator.js";
import type { PyObject } from "./value.js";

const tuple = (...items: PyObject[]): PyTuple => new PyTuple(items);

describe("arithmetic keeps Python's types", () => {
  it("keeps int + - * // % ** int an int, of any size", () => {
    expect(operator.add(2n, 3n)).toBe(5n);
    expect(operator.sub(2n, 3n)).toBe(-1n);
    expect(operator.mul(2n ** 60n, 2n ** 60n)).toBe(2n ** 120n);
    // -7 // 2 == -4, -7 % 2 == 1, 7 % -2 == -1, 2 ** 100 == 1267650600228229401496703205376
    expect(operator.floordiv(-7n, 2n)).toBe(-4n);
    expect(operator.mod(-7n, 2n)).toBe(1n);
    expect(operator.mod(7n, -2n)).toBe(-1n);
    expect(operator.pow(2n, 100n)).toBe(1267650600228229401496703205376n);
  });

  it("counts bool as an int, and makes a float of anything with a float or of /", () => {
    // True + True == 2 (an int); 6 / 3 == 2.0; 2 + 0.5 == 2.5; 2 ** -1 == 0.5; -True == -1
    expect(operator.add(true, true)).toBe(2n);
    expect(operator.truediv(6n, 3n)).toBe(2);
    expect(operator.add(2n, 0.5)).toBe(2.5);
    expect(operator.mul(3n, 1.0)).toBe(3);
    expect(operator.pow(2n, -1n)).toBe(0.5);
    expect(operator.neg(true)).toBe(-1n);
    expect(operator.pos(false)).toBe(0n);
    expect(operator.invert(5n)).toBe(-6n);
    expect(operator.abs(-3n)).toBe(3n);
    expect(operator.abs(-2.5)).toBe(2.5);
    // -7.5 // 2 == -4.0; -7.5 % 2 == 0.5; 7.0 % -2 == -1.0; -0.0 is kept by 0.0 % -1
    expect(operator.floordiv(-7.5, 2n)).toBe(-4);
    expect(operator.mod(-7.5, 2n)).toBe(0.5);
    expect(operator.mod(7, -2n)).toBe(-1);
    expect(Object.is(operator.mod(0, -1n), -0)).toBe(true);
  });

  it("concatenates and repeats sequences of one type", () => {
    expect(operator.add("ab", "cd")).toBe("abcd");
    expect(operator.add([1n], [2n])).toEqual([1n, 2n]);
    expect(operator.add(tuple(1n), tuple(2n))).toEqual(tuple(1n, 2n));
    expect(operator.mul("ab", 3n)).toBe("ababab");
    expect(operator.mul(2n, [0n])).toEqual([0n, 0n]);
    expect(operator.mul(tuple("x"), true)).toEqual(tuple("x"));
    expect(operator.mul("ab", -1n)).toBe("");
  });

  it("raises what Python raises for the wrong types and for zero divisors", () => {
    expect(exceptionText(() => operator.add("a", 1n))).toBe('TypeError: can only concatenate str (not "int") to str');
    expect(exceptionText(() => operator.add([1n], tuple(2n)))).toBe('TypeError: can only concatenate list (not "tuple") to list');
    expect(exceptionText(() => operator.add(tuple(), [1n]))).toBe('TypeError: can only concatenate tuple (not "list") to tuple');
    expect(exceptionText(() => operator.add(1n, "a"))).toBe("TypeError: unsupported operand type(s) for +: 'int' and 'str'");
    expect(exceptionText(() => operator.sub("a", 1n))).toBe("TypeError: unsupported operand type(s) for -: 'str' and 'int'");
    expect(exceptionText(() => operator.mul("ab", 2))).toBe("TypeError: can't multiply sequence by non-int of type 'float'");
    expect(exceptionText(() => operator.mul(null, 2n))).toBe("TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'");
    expect(exceptionText(() => operator.pow("a", 2n))).toBe("TypeError: unsupported operand type(s) for ** or pow(): 'str' and 'int'");
    expect(exceptionText(() => operator.neg("a"))).toBe("TypeError: bad operand type for unary -: 'str'");
    expect(exceptionText(() => operator.abs(null))).toBe("TypeError: bad operand type for abs(): 'NoneType'");
    expect(exceptionText(() => operator.truediv(1n, 0n))).toBe("ZeroDivisionError: division by zero");
    expect(exceptionText(() => operator.truediv(1, 0n))).toBe("ZeroDivisionError: float division by zero");
    expect(exceptionText(() => operator.floordiv(1n, 0n))).toBe("ZeroDivisionError: integer division or modulo by zero");
    expect(exceptionText(() => operator.mod(1n, false))).toBe("ZeroDivisionError: integer division or modulo by zero");
    expect(exceptionText(() => operator.mod(1.5, 0))).toBe("ZeroDivisionError: float modulo");
    expect(exceptionText(() => operator.mod("%s", 1n))).toBe("TypeError: not all arguments converted during string formatting");
  });

  it("looks operators up by their symbol", () => {
    expect(operator.BINARY["//"]!(7n, 2n)).toBe(3n);
    expect(operator.BINARY["@"]).toBeUndefined();
  });
});

describe("comparisons order as Python orders", () => {
  it("compares an int and a float exactly, and nan with nothing", () => {
    // 2**53 + 1 > 2.0**53; 1 < 1.5; True <= 1.0; float('nan') < 1 and > 1 are both False
    expect(operator.gt(2n ** 53n + 1n, 2 ** 53)).toBe(true);
    expect(operator.lt(1n, 1.5)).toBe(true);
    expect(operator.le(true, 1)).toBe(true);
    expect(operator.lt(NaN, 1n)).toBe(false);
    expect(operator.ge(NaN, 1n)).toBe(false);
    expect(operator.ge(Infinity, Infinity)).toBe(true);
    expect(operator.lt(-Infinity, -(2n ** 2000n))).toBe(true);
  });

  it("compares strings by code point and lists and tuples item by item", () => {
    expect(operator.lt("\uffff", "😀")).toBe(true);
    expect(operator.lt([1n, 2n], [1n, 3n])).toBe(true);
    expect(operator.lt([1n, 2n], [1n, 2n, 0n])).toBe(true);
    expect(operator.ge(tuple(2n), tuple(1n, 9n))).toBe(true);
    // [1, 'a'] < [1.0, 'b']: the first items are equal, so the strings decide.
    expect(operator.lt([1n, "a"], [1, "b"])).toBe(true);
  });

  it("raises TypeError for types without an order between them", () => {
    expect(exceptionText(() => operator.lt("a", 1n))).toBe("TypeError: '<' not supported between instances of 'str' and 'int'");
    expect(exceptionText(() => operator.ge(null, 1n))).toBe("TypeError: '>=' not supported between instances of 'NoneType' and 'int'");
    expect(exceptionText(() => operator.lt([1n], tuple(1n)))).toBe("TypeError: '<' not supported between instances of 'list' and 'tuple'");
    expect(exceptionText(() => operator.gt([1n, "a"], [1n, 2n]))).toBe("TypeError: '>' not supported between instances of 'str' and 'int'");
  });
});

describe("the container protocol", () => {
  it("tests membership as `in` does", () => {
    expect(operator.contains("epoch_millis", "")).toBe(true);
    expect(operator.contains([1], true)).toBe(true);
    expect(operator.contains(tuple("a", "b"), "b")).toBe(true);
    expect(operator.contains(new PyHashDict([[1n, "x"]]), 1)).toBe(true);
    expect(operator.contains(new Map([["1", "x"]]), 1n)).toBe(false);
    expect(operator.contains(new PySet(["a"]), "a")).toBe(true);
    expect(exceptionText(() => operator.contains("abc", 1n))).toBe("TypeError: 'in <string>' requires string as left operand, not int");
    expect(exceptionText(() => operator.contains(5n, 1n))).toBe("TypeError: argument of type 'int' is not iterable");
    expect(exceptionText(() => operator.contains(PyHashDict.of({}), [1n]))).toBe("TypeError: unhashable type: 'list'");
  });

  it("indexes as `x[k]` does, by code point for strings", () => {
    expect(operator.getitem("a😀b", 1n)).toBe("😀");
    expect(operator.getitem([1n, 2n, 3n], -1n)).toBe(3n);
    expect(operator.getitem([1n, 2n], true)).toBe(2n);
    expect(operator.getitem(tuple("x"), 0n)).toBe("x");
    expect(operator.getitem(PyHashDict.of({ a: 1n }), "a")).toBe(1n);
    expect(operator.getitem(new Map([["a", 1n]]), "a")).toBe(1n);
    expect(exceptionText(() => operator.getitem(PyHashDict.of({ a: 1n }), "b"))).toBe("KeyError: 'b'");
    expect(exceptionText(() => operator.getitem(new Map([["a", 1n]]), 1n))).toBe("KeyError: 1");
    expect(exceptionText(() => operator.getitem([1n], 1n))).toBe("IndexError: list index out of range");
    expect(exceptionText(() => operator.getitem(tuple(), 0n))).toBe("IndexError: tuple index out of range");
    expect(exceptionText(() => operator.getitem("ab", 5n))).toBe("IndexError: string index out of range");
    expect(exceptionText(() => operator.getitem([1n], "0"))).toBe("TypeError: list indices must be integers or slices, not str");
    expect(exceptionText(() => operator.getitem(tuple(1n), 0))).toBe("TypeError: tuple indices must be integers or slices, not float");
    expect(exceptionText(() => operator.getitem("ab", "0"))).toBe("TypeError: string indices must be integers, not 'str'");
    expect(exceptionText(() => operator.getitem(5n, 0n))).toBe("TypeError: 'int' object is not subscriptable");
  });

  it("assigns items as `x[k] = v` does", () => {
    const d = PyHashDict.of({ a: 1n });
    operator.setitem(d, 2n, "two");
    expect(d.get(2)).toBe("two");
    const list: PyObject[] = [1n, 2n];
    operator.setitem(list, -1n, "last");
    expect(list).toEqual([1n, "last"]);
    expect(exceptionText(() => operator.setitem(list, 2n, 0n))).toBe("IndexError: list assignment index out of range");
    expect(exceptionText(() => operator.setitem(tuple(1n), 0n, 0n))).toBe("TypeError: 'tuple' object does not support item assignment");
    expect(exceptionText(() => operator.setitem("ab", 0n, "c"))).toBe("TypeError: 'str' object does not support item assignment");
  });
});

describe("float() and int()", () => {
  it("read strings as Python reads them", () => {
    // float(' 1_000.5 ') == 1000.5; float('-Infinity'); float('1e3') == 1000.0; float('.5')
    expect(pyFloat(" 1_000.5 ")).toBe(1000.5);
    expect(pyFloat("-Infinity")).toBe(-Infinity);
    expect(pyFloat("nan")).toBeNaN();
    expect(pyFloat("1e3")).toBe(1000);
    expect(pyFloat(".5")).toBe(0.5);
    expect(pyFloat("5.")).toBe(5);
    // int(' -0_7 ') == -7; int('+5') == 5
    expect(pyInt(" -0_7 ")).toBe(-7n);
    expect(pyInt("+5")).toBe(5n);
    expect(pyInt("123456789012345678901234567890")).toBe(123456789012345678901234567890n);
  });

  it("convert numbers: floats truncate toward zero, bools are 0 and 1", () => {
    expect(pyInt(-2.7)).toBe(-2n);
    expect(pyInt(true)).toBe(1n);
    expect(pyInt(1e20)).toBe(100000000000000000000n);
    expect(pyFloat(3n)).toBe(3);
    expect(pyFloat(false)).toBe(0);
  });

  it("raise what Python raises", () => {
    expect(exceptionText(() => pyFloat("1__0"))).toBe("ValueError: could not convert string to float: '1__0'");
    expect(exceptionText(() => pyFloat("abc"))).toBe("ValueError: could not convert string to float: 'abc'");
    expect(exceptionText(() => pyFloat(null))).toBe("TypeError: float() argument must be a string or a real number, not 'NoneType'");
    expect(exceptionText(() => pyFloat(10n ** 400n))).toBe("OverflowError: int too large to convert to float");
    expect(exceptionText(() => pyInt("1.5"))).toBe("ValueError: invalid literal for int() with base 10: '1.5'");
    expect(exceptionText(() => pyInt("_1"))).toBe("ValueError: invalid literal for int() with base 10: '_1'");
    expect(exceptionText(() => pyInt(NaN))).toBe("ValueError: cannot convert float NaN to integer");
    expect(exceptionText(() => pyInt(-Infinity))).toBe("OverflowError: cannot convert float infinity to integer");
    expect(exceptionText(() => pyInt([]))).toBe("TypeError: int() argument must be a string, a bytes-like object or a real number, not 'list'");
  });
});
