import { PyException } from "./errors.js";
import { floatRepr } from "./float.js";
import { PyHashDict, PyOpaque, PySet, PyTuple } from "./objects.js";
import { strRepr } from "./string.js";

/**
 * A Python value as the benchmarks' Python code sees it. The difference from JSON matters for exact output:
 * Python's `int` is a `bigint` here and its `float` a `number` (so `1.0` stays a float), a
 * `dict` is a `Map` (insertion order, even for keys that look like numbers), a `list` is an
 * array, and a pydantic model is a plain object whose keys are in field-declaration order.
 */
export type PyValue = null | boolean | string | bigint | number | PyList | PyDict | PyModel;
export type PyList = PyValue[];
export type PyDict = Map<string, PyValue>;
export interface PyModel {
  [field: string]: PyValue;
}

/**
 * Any Python value the model represents: a `PyValue`, or a `tuple` (`PyTuple`), a `set`
 * (`PySet`), a dict keyed by any hashable value (`PyHashDict`), or an object known only by its
 * type name and repr (`PyOpaque`), and lists and `Map` dicts holding them. Every function of this
 * package that takes a value takes a `PyObject`, unless it says otherwise.
 *
 * `PyValue`'s own members (`PyValue[]`, …) stay in the union on purpose: a `PyValue` passed where
 * a `PyObject` is expected then meets its own type, which typescript-eslint's
 * no-unsafe-class-instance-assignment needs (between two different recursive types it recurses
 * until the stack overflows).
 */
export type PyObject = PyValue | PyObject[] | Map<string, PyObject> | PyFields | PyTuple | PySet | PyHashDict | PyOpaque;

/** A model among `PyObject`s: a plain object of fields, in field order (every `PyModel` is one). */
export interface PyFields {
  [field: string]: PyObject;
}

/** Plain JSON as `JSON.parse` returns it and the role protocol carries it. */
export type JsonData = null | boolean | number | string | JsonData[] | { [key: string]: JsonData };

export function isPyDict(value: unknown): value is PyDict {
  return value instanceof Map;
}

export function isPyList(value: unknown): value is PyList {
  return Array.isArray(value);
}

export function isPyModel(value: unknown): value is PyModel {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Map) && !isPyClassInstance(value);
}

function isPyClassInstance(value: object): boolean {
  return value instanceof PyHashDict || value instanceof PyTuple || value instanceof PySet || value instanceof PyOpaque;
}

/** `type(value).__name__` (a model's is `dict`, as it prints like one). */
export function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return "NoneType";
  switch (typeof value) {
    case "boolean":
      return "bool";
    case "string":
      return "str";
    case "bigint":
      return "int";
    case "number":
      return "float";
    default:
      if (Array.isArray(value)) return "list";
      if (value instanceof PyTuple) return "tuple";
      if (value instanceof PySet) return "set";
      if (value instanceof PyOpaque) return value.typeName;
      return "dict";
  }
}

/** How a text format spells `None`, the bools and floats (an int is its digits in every one). */
export interface ScalarSpelling {
  readonly none: string;
  readonly true: string;
  readonly false: string;
  readonly float: (value: number) => string;
}

const REPR_SCALARS: ScalarSpelling = { none: "None", true: "True", false: "False", float: floatRepr };

/** A scalar's text in a format (`str` writes a string), or undefined for a container: `repr()` and `json.dumps` share it. */
export function scalarText(value: PyObject, spelling: ScalarSpelling, str: (text: string) => string): string | undefined {
  if (value === null) return spelling.none;
  switch (typeof value) {
    case "boolean":
      return value ? spelling.true : spelling.false;
    case "string":
      return str(value);
    case "bigint":
      return value.toString();
    case "number":
      return spelling.float(value);
  }
  return undefined;
}

/**
 * Python's `repr()`: `None`, `True`, `'text'`, `2`, `2.0`, `[1, 2]`, `(1,)`, `{'a': 1}`, `{1, 2}`
 * and `set()`; models print like dicts, opaque objects as their repr.
 */
export function pyRepr(value: PyObject): string {
  const scalar = scalarText(value, REPR_SCALARS, strRepr);
  if (scalar !== undefined) return scalar;
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (value instanceof Map) return `{${[...value].map(([key, item]) => `${strRepr(key)}: ${pyRepr(item)}`).join(", ")}}`;
  if (value instanceof PyHashDict) return `{${[...value].map(([key, item]) => `${pyRepr(key)}: ${pyRepr(item)}`).join(", ")}}`;
  if (value instanceof PyTuple) return value.items.length === 1 ? `(${pyRepr(value.items[0]!)},)` : `(${value.items.map(pyRepr).join(", ")})`;
  if (value instanceof PySet) return value.size === 0 ? "set()" : `{${[...value].map(pyRepr).join(", ")}}`;
  if (value instanceof PyOpaque) return value.repr;
  // Only a model's fields are left (the scalars were written first).
  return `{${Object.entries(value as PyFields)
    .map(([key, item]) => `${strRepr(key)}: ${pyRepr(item)}`)
    .join(", ")}}`;
}

/** Python's `str()`: strings as they are, everything else as `repr()`. */
export function pyStr(value: PyObject): string {
  return typeof value === "string" ? value : pyRepr(value);
}

/** `str(KeyError(key))` is the key's repr. */
export function keyError(key: PyObject): PyException {
  return new PyException("KeyError", pyRepr(key));
}

/**
 * A decoded JSON value (as the role protocol carries tool arguments) as Python would have read
 * it. JavaScript does not keep `2.0` apart from `2`, so integral numbers become ints.
 */
export function fromJson(value: JsonData): PyValue {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(fromJson);
  if (value !== null && typeof value === "object") {
    const dict: PyDict = new Map();
    for (const [key, item] of Object.entries(value)) dict.set(key, fromJson(item));
    return dict;
  }
  return value;
}

/**
 * A Python value as plain JSON for snapshots, logs and tool specs: ints beyond 2^53 lose
 * precision, tuples and sets become arrays, dict keys their `str()`, opaque objects their repr.
 */
export function toJson(value: PyObject): JsonData {
  if (typeof value === "bigint") return Number(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof PyTuple) return value.items.map(toJson);
  if (value instanceof PySet) return [...value].map(toJson);
  if (value instanceof PyOpaque) return value.repr;
  // No prototype: a `__proto__` key is data like any other, and reads see only the keys.
  const out = Object.create(null) as Record<string, JsonData>;
  if (value instanceof Map) for (const [key, item] of value) out[key] = toJson(item);
  else if (value instanceof PyHashDict) for (const [key, item] of value) out[pyStr(key)] = toJson(item);
  else for (const [key, item] of Object.entries(value)) out[key] = toJson(item);
  return out;
}

/**
 * Python's `==`: `1 == 1.0 == True` (an int and a float compare exactly), `nan` equals nothing,
 * lists and tuples item by item (a list never equals a tuple), dicts and sets whatever their
 * order (a model compares as the dict of its fields), opaque objects by their `equals`.
 */
export function pyEquals(a: PyObject, b: PyObject): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  const ta = typeof a;
  const tb = typeof b;
  if (ta === "string" || tb === "string") return false;
  if (ta !== "object" || tb !== "object") {
    if (ta !== "object" && tb !== "object") return numbersEqual(a as boolean | bigint | number, b as boolean | bigint | number);
    // A number and an object: only an opaque object's own `==` can say they are equal.
    if (a instanceof PyOpaque) return a.equals ? a.equals(b) : false;
    return b instanceof PyOpaque && b.equals ? b.equals(a) : false;
  }
  const x = a as object;
  const y = b as object;
  if (Array.isArray(x)) return Array.isArray(y) && sequencesEqual(x as PyObject[], y as PyObject[]);
  if (x instanceof PyTuple) return y instanceof PyTuple && sequencesEqual(x.items, y.items);
  if (x instanceof PySet) return y instanceof PySet && x.size === y.size && [...x].every((item) => y.has(item));
  if (x instanceof PyOpaque) return x.equals ? x.equals(b) : y instanceof PyOpaque && x.typeName === y.typeName && x.repr === y.repr;
  if (y instanceof PyOpaque) return y.equals ? y.equals(a) : false;
  if (Array.isArray(y) || y instanceof PyTuple || y instanceof PySet) return false;
  return dictsEqual(x as DictLike, y as DictLike);
}

function numbersEqual(a: boolean | bigint | number, b: boolean | bigint | number): boolean {
  const x = typeof a === "boolean" ? (a ? 1n : 0n) : a;
  const y = typeof b === "boolean" ? (b ? 1n : 0n) : b;
  if (typeof x === typeof y) return x === y;
  const float = typeof x === "number" ? x : (y as number);
  const int = typeof x === "bigint" ? x : (y as bigint);
  return Number.isInteger(float) && BigInt(float) === int;
}

function sequencesEqual(a: readonly PyObject[], b: readonly PyObject[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y && !pyEquals(x, y)) return false;
  }
  return true;
}

type DictLike = Map<string, PyObject> | PyHashDict | PyFields;

function dictSize(dict: DictLike): number {
  return dict instanceof Map || dict instanceof PyHashDict ? dict.size : Object.keys(dict).length;
}

function dictEntries(dict: DictLike): Iterable<[PyObject, PyObject]> {
  return dict instanceof Map || dict instanceof PyHashDict ? dict : Object.entries(dict);
}

/** `dict[key]` of any dict form, undefined when absent (a `Map` or a model holds only str keys). */
function dictLookup(dict: DictLike, key: PyObject): PyObject | undefined {
  if (dict instanceof PyHashDict) return dict.get(key);
  if (typeof key !== "string") return undefined;
  if (dict instanceof Map) return dict.get(key);
  return Object.hasOwn(dict, key) ? dict[key] : undefined;
}

function dictsEqual(a: DictLike, b: DictLike): boolean {
  if (dictSize(a) !== dictSize(b)) return false;
  for (const [key, value] of dictEntries(a)) {
    const other = dictLookup(b, key);
    if (other === undefined || (other !== value && !pyEquals(value, other))) return false;
  }
  return true;
}

/** Truth value (`if x:`) of a Python value: empty containers, zero, `''` and `None` are false. */
export function truthy(value: PyObject): boolean {
  if (value === null || value === false) return false;
  if (value === true) return true;
  if (typeof value === "string") return value.length > 0;
  if (typeof value === "bigint") return value !== 0n;
  if (typeof value === "number") return value !== 0;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map || value instanceof PyHashDict || value instanceof PySet) return value.size > 0;
  if (value instanceof PyTuple) return value.items.length > 0;
  return true;
}

/**
 * A deep copy (Python's `copy.deepcopy`): lists, dicts, models and tuples are copied; sets are
 * new sets of the same (immutable) members; opaque objects are shared, as immutable.
 */
export function pyDeepCopy<T extends PyObject>(value: T): T {
  const source: PyObject = value;
  if (source === null || typeof source !== "object") return value;
  if (Array.isArray(source)) return source.map((item) => pyDeepCopy(item)) as T;
  if (source instanceof Map) {
    const copy = new Map<string, PyObject>();
    for (const [key, item] of source) copy.set(key, pyDeepCopy(item));
    return copy as T;
  }
  if (source instanceof PyHashDict) {
    const copy = new PyHashDict();
    for (const [key, item] of source) copy.set(key, pyDeepCopy(item));
    return copy as T;
  }
  if (source instanceof PyTuple) return new PyTuple(source.items.map((item) => pyDeepCopy(item))) as T;
  if (source instanceof PySet) return new PySet(source) as T;
  if (source instanceof PyOpaque) return value;
  // The same prototype as the model copied; fields are defined, so a `__proto__` field stays a field.
  const copy = Object.create(Object.getPrototypeOf(source) as object | null) as Record<string, PyObject>;
  for (const [key, item] of Object.entries(source))
    Object.defineProperty(copy, key, { value: pyDeepCopy(item), enumerable: true, writable: true, configurable: true });
  return copy as T;
}
