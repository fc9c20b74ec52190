import { describe, expect, it } from "vitest";
import { pyDumps } from "./dumps.js";
import { exceptionText } from "./errors.js";
import { hashDictModel, jsonLoads } from "./json-loads.js";
import { hashKey, PyHashDict, PyOpaque, PySet, PyTuple } from "./objects.js";
import { len, iterate } from "./ops.js";
import { pyDeepCopy, pyEquals, pyRepr, pyTypeName, toJson, truthy, type PyObject } from "./value.js";

const tuple = (...items: PyObject[]): PyTuple => new PyTuple(items);

describe("dicts with any hashable key", () => {
  it("file 1, 1.0 and True under one key, keeping the first key object and its position", () => {
    // d = {1: 'a', 'x': 'b'}; d[True] = 'c'; d[1.0] = 'd'  →  {1: 'd', 'x': 'b'}
    const d = new PyHashDict([
      [1n, "a"],
      ["x", "b"],
    ]);
    d.set(true, "c");
    d.set(1, "d");
    expect(d.size).toBe(2);
    expect(pyRepr(d)).toBe("{1: 'd', 'x': 'b'}");
    // d = {True: 'a'}; d[1] = 'b'  →  {True: 'b'}
    const e = new PyHashDict([[true, "a"]]);
    e.set(1n, "b");
    expect(pyRepr(e)).toBe("{True: 'b'}");
    expect(e.get(1)).toBe("b");
  });

  it("keys tuples by their items, None by itself, and a float by its value", () => {
    // {(1, 'a'): 1, None: 2, 1.5: 3, 0: 4}[(True, 'a')] is 1; -0.0 and False are the key 0.
    const d = new PyHashDict([
      [tuple(1n, "a"), 1n],
      [null, 2n],
      [1.5, 3n],
      [0n, 4n],
    ]);
    expect(d.get(tuple(true, "a"))).toBe(1n);
    expect(d.get(tuple(1n, "a", "b"))).toBeUndefined();
    expect(d.get(null)).toBe(2n);
    expect(d.get(1.5)).toBe(3n);
    expect(d.get(-0)).toBe(4n);
    expect(d.get(false)).toBe(4n);
    expect(pyRepr(d)).toBe("{(1, 'a'): 1, None: 2, 1.5: 3, 0: 4}");
    // A string that spells a tuple's items is a different key.
    expect(new PyHashDict([[tuple("a,b"), 1n]]).has(tuple("a", "b"))).toBe(false);
  });

  it("refuse unhashable keys as Python does", () => {
    expect(exceptionText(() => new PyHashDict().set([1n], 1n))).toBe("TypeError: unhashable type: 'list'");
    expect(exceptionText(() => new PyHashDict().get(new PyHashDict()))).toBe("TypeError: unhashable type: 'dict'");
    expect(exceptionText(() => new PyHashDict().has(new Map()))).toBe("TypeError: unhashable type: 'dict'");
    expect(exceptionText(() => hashKey(tuple(1n, [2n])))).toBe("TypeError: unhashable type: 'list'");
    expect(exceptionText(() => new PySet([new PySet()]))).toBe("TypeError: unhashable type: 'set'");
  });

  it("delete, copy shallowly, and iterate keys, values and items in insertion order", () => {
    const d = PyHashDict.of({ b: 1n, a: 2n });
    d.set(true, "t");
    d.delete("b");
    d.set("b", 3n);
    expect(d.keys()).toEqual(["a", true, "b"]);
    expect(d.values()).toEqual([2n, "t", 3n]);
    expect([...d]).toEqual([
      ["a", 2n],
      [true, "t"],
      ["b", 3n],
    ]);
    const copy = d.copy();
    copy.set("c", 4n);
    expect(d.size).toBe(3);
    expect(copy.keys()).toEqual(["a", true, "b", "c"]);
  });

  it("compare with each other and with str-keyed Maps whatever their order", () => {
    // {'a': 1, 'b': [2]} == {'b': [2.0], 'a': True}
    expect(
      pyEquals(
        PyHashDict.of({ a: 1n, b: [2n] }),
        new Map<string, PyObject>([
          ["b", [2]],
          ["a", true],
        ]),
      ),
    ).toBe(true);
    expect(pyEquals(new PyHashDict([[1n, "x"]]), new PyHashDict([[1, "x"]]))).toBe(true);
    expect(pyEquals(new PyHashDict([[1n, "x"]]), new Map([["1", "x"]]))).toBe(false);
    expect(pyEquals(PyHashDict.of({ a: 1n }), PyHashDict.of({ a: 1n, b: 2n }))).toBe(false);
  });
});

describe("tuples, sets and opaque objects", () => {
  it("print as Python prints them", () => {
    expect(pyRepr([tuple(1n), tuple(), tuple(1n, "a"), new PySet(), new PySet([3n, 3]), null, true, 2])).toBe(
      "[(1,), (), (1, 'a'), set(), {3}, None, True, 2.0]",
    );
    expect(pyRepr(new PyOpaque("mpf", () => "mpf('1.3027')"))).toBe("mpf('1.3027')");
  });

  it("have Python's type names and truth values", () => {
    expect([tuple(), new PySet(), new PyHashDict(), new PyOpaque("Decimal", "Decimal('1')"), new Map(), {}].map(pyTypeName)).toEqual([
      "tuple",
      "set",
      "dict",
      "Decimal",
      "dict",
      "dict",
    ]);
    expect([tuple(), tuple(0n), new PySet(), new PySet([0n]), new PyHashDict(), PyHashDict.of({ a: null }), new PyOpaque("x", "x")].map(truthy)).toEqual([
      false,
      true,
      false,
      true,
      false,
      true,
      true,
    ]);
  });

  it("compare as Python compares them", () => {
    // [1, 2] != (1, 2); (1, 2.0) == (True, 2); {1, 2} == {2.0, 1}
    expect(pyEquals([1n, 2n], tuple(1n, 2n))).toBe(false);
    expect(pyEquals(tuple(1n, 2), tuple(true, 2n))).toBe(true);
    expect(pyEquals(new PySet([1n, 2n]), new PySet([2, 1n]))).toBe(true);
    expect(pyEquals(new PySet([1n]), new PySet([1n, 2n]))).toBe(false);
    // float('nan') == float('nan') is False
    expect(pyEquals(NaN, NaN)).toBe(false);
    expect(pyEquals(new PyOpaque("mpf", "mpf('1.0')"), new PyOpaque("mpf", "mpf('1.0')"))).toBe(true);
    expect(pyEquals(new PyOpaque("mpf", "mpf('1.0')"), new PyOpaque("Decimal", "mpf('1.0')"))).toBe(false);
    const one = new PyOpaque("Fraction", "Fraction(1, 1)", (other) => pyEquals(other, 1n));
    expect(pyEquals(one, 1)).toBe(true);
    expect(pyEquals(1, one)).toBe(true);
  });

  it("count and iterate as len() and list() do", () => {
    expect([len(tuple(1n, 2n)), len(new PySet([1n, 1, true])), len(PyHashDict.of({ a: 1n })), len("a😀b")]).toEqual([2, 1, 1, 3]);
    expect(
      iterate(
        new PyHashDict([
          [1n, "a"],
          ["k", "b"],
        ]),
      ),
    ).toEqual([1n, "k"]);
    expect(iterate(tuple("x", 2n))).toEqual(["x", 2n]);
    expect(exceptionText(() => len(new PyOpaque("mpf", "mpf('1.0')")))).toBe("TypeError: object of type 'mpf' has no len()");
  });

  it("deep-copy containers and share what is immutable", () => {
    const inner = [1n];
    const opaque = new PyOpaque("mpf", "mpf('2.0')");
    const original = new PyHashDict([
      [tuple(1n), [inner, opaque]],
      ["set", new PySet(["x"])],
    ]);
    const copy = pyDeepCopy(original);
    expect(pyEquals(copy, original)).toBe(true);
    const items = copy.get(tuple(1n)) as PyObject[];
    expect(items[0]).not.toBe(inner);
    expect(items[1]).toBe(opaque);
    expect(copy.get("set")).not.toBe(original.get("set"));
  });
});

describe("json.dumps and json.loads with these types", () => {
  it("writes tuples as lists and int, float, bool and None keys as their JSON text", () => {
    // json.dumps({'a': (1, 2.0, 'é'), 1: True, 1.5: False, None: 0, False: None})
    const d = new PyHashDict([
      ["a", tuple(1n, 2, "é")],
      [1n, true],
      [1.5, false],
      [null, 0n],
      [false, null],
    ]);
    expect(pyDumps(d)).toBe('{"a": [1, 2.0, "\\u00e9"], "1": true, "1.5": false, "null": 0, "false": null}');
  });

  it("raises Python's TypeError for what JSON cannot carry", () => {
    expect(exceptionText(() => pyDumps(PyHashDict.of({ s: new PySet([1n]) })))).toBe("TypeError: Object of type set is not JSON serializable");
    expect(exceptionText(() => pyDumps([new PyOpaque("mpf", "mpf('1.0')")]))).toBe("TypeError: Object of type mpf is not JSON serializable");
    expect(exceptionText(() => pyDumps(new PyHashDict([[tuple(1n), 1n]])))).toBe("TypeError: keys must be str, int, float, bool or None, not tuple");
  });

  it("sorts keys as sorted(d.items()) does, and refuses to order str and int keys", () => {
    // json.dumps({2: 'b', 1.5: 'a', True: 'c'}, sort_keys=True)
    expect(
      pyDumps(
        new PyHashDict([
          [2n, "b"],
          [1.5, "a"],
          [true, "c"],
        ]),
        { sortKeys: true },
      ),
    ).toBe('{"true": "c", "1.5": "a", "2": "b"}');
    expect(
      exceptionText(() =>
        pyDumps(
          new PyHashDict([
            ["a", 1n],
            [1n, 2n],
          ]),
          { sortKeys: true },
        ),
      ),
    ).toBe("TypeError: '<' not supported between instances of 'int' and 'str'");
  });

  it("indents as json.dumps(indent=n) does", () => {
    // json.dumps({'a': [1], 'b': {}, 'c': [], 'd': {'e': (None,)}}, indent=4)
    const d = PyHashDict.of({ a: [1n], b: new PyHashDict(), c: [], d: PyHashDict.of({ e: tuple(null) }) });
    expect(pyDumps(d, { indent: 4 })).toBe(
      '{\n    "a": [\n        1\n    ],\n    "b": {},\n    "c": [],\n    "d": {\n        "e": [\n            null\n        ]\n    }\n}',
    );
    // json.dumps([1, {'b': 1, 'a': 2}], indent=0, sort_keys=True)
    expect(
      pyDumps(
        [
          1n,
          new Map([
            ["b", 1n],
            ["a", 2n],
          ]),
        ],
        { indent: 0, sortKeys: true },
      ),
    ).toBe('[\n1,\n{\n"a": 2,\n"b": 1\n}\n]');
    expect(pyDumps("x", { indent: 2 })).toBe('"x"');
  });

  it("reads JSON into PyHashDicts that take any key later", () => {
    const value = jsonLoads('{"a": 1.0, "b": 1, "c": [12345678901234567890, NaN]}', hashDictModel) as PyHashDict;
    expect(value.get("a")).toBe(1);
    expect(value.get("b")).toBe(1n);
    value.set(2n, "two");
    expect(pyDumps(value)).toBe('{"a": 1.0, "b": 1, "c": [12345678901234567890, NaN], "2": "two"}');
  });

  it("turns into plain JSON with str() keys and arrays for tuples and sets", () => {
    const d = new PyHashDict([
      [1n, tuple(2n, 2.5)],
      ["s", new PySet(["x"])],
      ["o", new PyOpaque("Decimal", "Decimal('1.5')")],
    ]);
    expect(toJson(d)).toEqual({ "1": [2, 2.5], s: ["x"], o: "Decimal('1.5')" });
  });
});
