import { typeError } from "./errors.js";
import { jsonFloat, jsonString, jsonStringUnicode } from "./json.js";
import { PyHashDict, PyOpaque, PySet, PyTuple } from "./objects.js";
import { compareOrder } from "./compare.js";
import { sortCodePoints } from "./string.js";
import { pyTypeName, type PyFields, type PyObject, type PyValue, scalarText, type ScalarSpelling } from "./value.js";

// `json.loads` is `jsonLoads`, whose default model (ints as `bigint`, floats as `number`, dicts
// as `Map`s) is a part of `PyValue`.

const JSON_SCALARS: ScalarSpelling = { none: "null", true: "true", false: "false", float: jsonFloat };

export interface PyDumpsOptions {
  /** `sort_keys=True`. */
  sortKeys?: boolean;
  /** `ensure_ascii` (default true); false writes non-ASCII characters as they are. */
  ensureAscii?: boolean;
  /** `indent=n`: one item per line, `n` more spaces per level, `","` at line ends (`": "` after keys still). */
  indent?: number;
}

/**
 * Python's `json.dumps(value)` with its defaults: `", "` and `": "` separators, every
 * non-ASCII character escaped as `\uXXXX`, floats as Python prints them (`1.0`, `1e-05`),
 * `NaN`/`Infinity` for non-finite floats, tuples as lists, `int`/`float`/`bool`/`None` dict keys
 * as their JSON text. With `sortKeys`, keys are sorted (strings by code point). What JSON cannot
 * carry (a set, an opaque object, a tuple as a key) raises Python's `TypeError`.
 */
export function pyDumps(value: PyObject, options: PyDumpsOptions = {}): string {
  const str = options.ensureAscii === false ? jsonStringUnicode : jsonString;
  const sortKeys = options.sortKeys === true;
  if (options.indent !== undefined) return dumpIndented(value, sortKeys, str, " ".repeat(options.indent), "\n");
  return dumpValue(value, sortKeys, undefined, str);
}

/**
 * The `json.dumps` text of one value (string concatenation is V8's fastest builder here). With
 * `item`, list items and dict values are written by it, so a caller can reuse texts it already has.
 */
export function dumpValue(value: PyValue, sortKeys: boolean, item?: (value: PyValue) => string, str?: (s: string) => string): string;
export function dumpValue(value: PyObject, sortKeys: boolean, item?: (value: PyObject) => string, str?: (s: string) => string): string;
export function dumpValue(value: PyObject, sortKeys: boolean, item?: (value: never) => string, str: (s: string) => string = jsonString): string {
  const scalar = scalarText(value, JSON_SCALARS, str);
  if (scalar !== undefined) return scalar;
  const write = item as ((value: PyObject) => string) | undefined;
  const dump = (inner: PyObject): string => (write === undefined ? dumpValue(inner, sortKeys, undefined, str) : write(inner));
  const items = Array.isArray(value) ? value : value instanceof PyTuple ? value.items : undefined;
  if (items !== undefined) {
    let out = "[";
    for (let i = 0; i < items.length; i++) out += (i > 0 ? ", " : "") + dump(items[i]!);
    return `${out}]`;
  }
  let out = "{";
  let first = true;
  if (value instanceof Map) {
    const keys = sortKeys ? sortCodePoints([...value.keys()]) : value.keys();
    for (const key of keys) {
      out += `${first ? "" : ", "}${str(key)}: ${dump(value.get(key)!)}`;
      first = false;
    }
  } else if (value instanceof PyHashDict) {
    for (const [key, inner] of dictItems(value, sortKeys)) {
      out += `${first ? "" : ", "}${str(jsonKey(key))}: ${dump(inner)}`;
      first = false;
    }
  } else if (value instanceof PySet || value instanceof PyOpaque) {
    throw notSerializable(value);
  } else {
    const model = value as PyFields;
    const keys = sortKeys ? sortCodePoints(Object.keys(model)) : Object.keys(model);
    for (const key of keys) {
      out += `${first ? "" : ", "}${str(key)}: ${dump(model[key]!)}`;
      first = false;
    }
  }
  return `${out}}`;
}

/** `json.dumps(value, indent=…)`: containers open a line per item; empty ones stay `[]` and `{}`. */
function dumpIndented(value: PyObject, sortKeys: boolean, str: (s: string) => string, unit: string, newline: string): string {
  if (value === null || typeof value !== "object") return dumpValue(value, sortKeys, undefined, str);
  const inner = newline + unit;
  const block = (parts: string[], open: string, close: string): string =>
    parts.length === 0 ? open + close : `${open}${inner}${parts.join(`,${inner}`)}${newline}${close}`;
  const nested = (item: PyObject): string => dumpIndented(item, sortKeys, str, unit, inner);
  if (Array.isArray(value) || value instanceof PyTuple) return block((Array.isArray(value) ? value : value.items).map(nested), "[", "]");
  if (value instanceof PySet || value instanceof PyOpaque) throw notSerializable(value);
  let entries: [string, PyObject][];
  if (value instanceof PyHashDict) entries = dictItems(value, sortKeys).map(([key, item]) => [jsonKey(key), item]);
  else {
    const all: [string, PyObject][] = value instanceof Map ? [...value] : Object.entries(value);
    entries = sortKeys ? all.sort(([a], [b]) => compareOrder(a, b)) : all;
  }
  return block(
    entries.map(([key, item]) => `${str(key)}: ${nested(item)}`),
    "{",
    "}",
  );
}

/** A dict's items, sorted by key as `sorted(d.items())` orders them when asked (mixed key types raise). */
function dictItems(dict: PyHashDict, sortKeys: boolean): [PyObject, PyObject][] {
  const items = [...dict];
  return sortKeys ? items.sort(([a], [b]) => compareOrder(a, b)) : items;
}

/** A dict key as JSON writes it: only `str`, `int`, `float`, `bool` and `None` keys are allowed. */
function jsonKey(key: PyObject): string {
  const text = scalarText(key, JSON_SCALARS, (name) => name);
  if (text !== undefined) return text;
  throw typeError(`keys must be str, int, float, bool or None, not ${pyTypeName(key)}`);
}

function notSerializable(value: PyObject): Error {
  return typeError(`Object of type ${pyTypeName(value)} is not JSON serializable`);
}
