import { floatRepr } from "./float.js";
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

/** Plain JSON as `JSON.parse` returns it and the role protocol carries it. */
export type JsonData = null | boolean | number | string | JsonData[] | { [key: string]: JsonData };

export function isPyDict(value: unknown): value is PyDict {
  return value instanceof Map;
}

export function isPyList(value: unknown): value is PyList {
  return Array.isArray(value);
}

export function isPyModel(value: unknown): value is PyModel {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Map);
}

/** `type(value).__name__` for the values JSON can produce. */
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
      return "dict";
  }
}

/** Python's `repr()` for the values JSON can produce (models print like dicts). */
export function pyRepr(value: PyValue): string {
  if (value === null) return "None";
  switch (typeof value) {
    case "boolean":
      return value ? "True" : "False";
    case "string":
      return strRepr(value);
    case "bigint":
      return value.toString();
    case "number":
      return floatRepr(value);
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return `{${entries.map(([key, item]) => `${strRepr(key)}: ${pyRepr(item)}`).join(", ")}}`;
}

/** Python's `str()`: strings as they are, everything else as `repr()`. */
export function pyStr(value: PyValue): string {
  return typeof value === "string" ? value : pyRepr(value);
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

/** A Python value as plain JSON for snapshots and logs (ints beyond 2^53 lose precision). */
export function toJson(value: PyValue): JsonData {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(toJson);
  if (value instanceof Map) {
    const out: Record<string, JsonData> = {};
    for (const [key, item] of value) out[key] = toJson(item);
    return out;
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, JsonData> = {};
    for (const [key, item] of Object.entries(value)) out[key] = toJson(item);
    return out;
  }
  return value;
}

function numeric(value: PyValue): number | bigint | undefined {
  if (typeof value === "boolean") return value ? 1n : 0n;
  if (typeof value === "bigint" || typeof value === "number") return value;
  return undefined;
}

/** Python's `==`: `1 == 1.0 == True`, dicts compare without order, lists in order. */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  const x = numeric(a);
  const y = numeric(b);
  if (x !== undefined || y !== undefined) {
    if (x === undefined || y === undefined) return false;
    if (typeof x === "bigint" && typeof y === "bigint") return x === y;
    if (typeof x === "number" && typeof y === "number") return x === y;
    const float = typeof x === "number" ? x : (y as number);
    const int = typeof x === "bigint" ? x : (y as bigint);
    return Number.isInteger(float) && BigInt(float) === int;
  }
  if (a === null || b === null || typeof a === "string" || typeof b === "string") return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => pyEquals(item, b[i]!));
  }
  const left: ReadonlyMap<string, PyValue> = isPyDict(a) ? a : new Map(Object.entries(a));
  const right: ReadonlyMap<string, PyValue> = isPyDict(b) ? b : new Map(Object.entries(b));
  if (left.size !== right.size) return false;
  for (const [key, item] of left) {
    const other = right.get(key);
    if (other === undefined || !pyEquals(item, other)) return false;
  }
  return true;
}

/** Truth value (`if x:`) of a Python value. */
export function truthy(value: PyValue): boolean {
  if (value === null || value === false) return false;
  if (value === true) return true;
  if (typeof value === "string") return value.length > 0;
  if (typeof value === "bigint") return value !== 0n;
  if (typeof value === "number") return value !== 0;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map) return value.size > 0;
  return true;
}

/** A deep copy (Python's `copy.deepcopy`) of a JSON-shaped Python value. */
export function pyDeepCopy<T extends PyValue>(value: T): T {
  const source: PyValue = value;
  if (isPyList(source)) return source.map((item) => pyDeepCopy(item)) as T;
  if (isPyDict(source)) {
    const copy: PyDict = new Map();
    for (const [key, item] of source) copy.set(key, pyDeepCopy(item));
    return copy as T;
  }
  if (isPyModel(source)) {
    const copy: PyModel = {};
    for (const [key, item] of Object.entries(source)) copy[key] = pyDeepCopy(item);
    return copy as T;
  }
  return value;
}
