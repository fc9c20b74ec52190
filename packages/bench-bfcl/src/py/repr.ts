import { floatRepr, jsonFloat, jsonString, strRepr } from "@envace/python-text";
import { PyDict, PyError, PyFloat, PyOpaque, PySet, PyTuple, typeName } from "./value.js";
import type { Py } from "./value.js";

/** Python `repr(value)`. */
export function pyRepr(value: Py): string {
  if (value === null) return "None";
  switch (typeof value) {
    case "boolean":
      return value ? "True" : "False";
    case "number":
    case "bigint":
      return String(value);
    case "string":
      return strRepr(value);
    default:
      if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
      if (value instanceof PyFloat) return floatRepr(value.value);
      if (value instanceof PyTuple) {
        if (value.items.length === 1) return `(${pyRepr(value.items[0]!)},)`;
        return `(${value.items.map(pyRepr).join(", ")})`;
      }
      if (value instanceof PyDict) return `{${[...value].map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(", ")}}`;
      if (value instanceof PySet) return value.size === 0 ? "set()" : `{${[...value].map(pyRepr).join(", ")}}`;
      return value.repr;
  }
}

/** Python `str(value)`: a string is itself, anything else its `repr`. */
export function pyStr(value: Py): string {
  return typeof value === "string" ? value : pyRepr(value);
}

/** `json.dumps` failed: the value holds something JSON cannot carry. */
export class NotSerializable extends PyError {
  constructor(message: string) {
    super("TypeError", message);
  }
}

/**
 * Python `json.dumps(value)` with its defaults: `", "` and `": "` separators, non-ASCII escaped,
 * `NaN`/`Infinity` allowed, tuples as arrays, int/float/bool/None keys turned into strings.
 */
export function jsonDumps(value: Py): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
    case "bigint":
      return String(value);
    case "string":
      return jsonString(value);
    default:
      if (Array.isArray(value)) return `[${value.map(jsonDumps).join(", ")}]`;
      if (value instanceof PyFloat) return jsonFloat(value.value);
      if (value instanceof PyTuple) return `[${value.items.map(jsonDumps).join(", ")}]`;
      if (value instanceof PyDict) return `{${[...value].map(([k, v]) => `${jsonString(jsonKey(k))}: ${jsonDumps(v)}`).join(", ")}}`;
      if (value instanceof PySet || value instanceof PyOpaque) {
        throw new NotSerializable(`Object of type ${typeName(value)} is not JSON serializable`);
      }
      throw new NotSerializable("Object is not JSON serializable");
  }
}

function jsonKey(key: Py): string {
  if (typeof key === "string") return key;
  if (key === null) return "null";
  if (typeof key === "boolean") return key ? "true" : "false";
  if (typeof key === "number" || typeof key === "bigint") return String(key);
  if (key instanceof PyFloat) return jsonFloat(key.value);
  throw new NotSerializable(`keys must be str, int, float, bool or None, not ${typeName(key)}`);
}

/** `json.dumps(value, indent=n)`: one item per line, `": "` after keys, `","` at line ends. */
export function jsonDumpsIndented(value: Py, indent: number, depth = 0): string {
  const pad = (level: number): string => " ".repeat(indent * level);
  const items = (entries: string[], open: string, close: string): string =>
    entries.length === 0 ? `${open}${close}` : `${open}\n${entries.map((e) => pad(depth + 1) + e).join(",\n")}\n${pad(depth)}${close}`;
  if (Array.isArray(value) || value instanceof PyTuple) {
    const list = Array.isArray(value) ? value : value.items;
    return items(
      list.map((item) => jsonDumpsIndented(item, indent, depth + 1)),
      "[",
      "]",
    );
  }
  if (value instanceof PyDict) {
    return items(
      [...value].map(([k, v]) => `${jsonString(jsonKey(k))}: ${jsonDumpsIndented(v, indent, depth + 1)}`),
      "{",
      "}",
    );
  }
  return jsonDumps(value);
}
