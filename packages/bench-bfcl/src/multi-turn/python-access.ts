import { contains, getItem } from "../py/containers.js";
import { hashKey, PyDict, PyError, PyTuple, typeError, typeName } from "../py/value.js";
import type { Py } from "../py/value.js";

/**
 * Small pieces of Python semantics the environments lean on: attribute errors for methods
 * called on the wrong type, `dict.get`, item assignment. Environments receive whatever values a
 * model sends, so each upstream method's behaviour on odd input is reproduced, errors included.
 */

/** The value as a `str`, or the `AttributeError` Python raises when a str method is called on something else. */
export function asStr(value: Py, method: string): string {
  if (typeof value === "string") return value;
  throw noAttribute(value, method);
}

export function noAttribute(value: Py, attribute: string): PyError {
  return new PyError("AttributeError", `'${typeName(value)}' object has no attribute '${attribute}'`);
}

/** `key in container` where a non-container raises as Python does. */
export function has(container: Py, key: Py): boolean {
  return contains(container, key);
}

/** `d.get(key, fallback)` on a dict (anything else has no `get`). */
export function dictGet(d: Py, key: Py, fallback: Py = null): Py {
  if (!(d instanceof PyDict)) throw noAttribute(d, "get");
  hashKey(key);
  return d.has(key) ? d.get(key)! : fallback;
}

/** `container[key]`. */
export function item(container: Py, key: Py): Py {
  return getItem(container, key);
}

/** `container[key] = value`. */
export function setItem(container: Py, key: Py, value: Py): void {
  if (container instanceof PyDict) {
    container.set(key, value);
    return;
  }
  if (Array.isArray(container)) {
    if (typeof key !== "number") throw typeError(`list indices must be integers or slices, not ${typeName(key)}`);
    const index = key < 0 ? container.length + key : key;
    if (index < 0 || index >= container.length) throw new PyError("IndexError", "list assignment index out of range");
    container[index] = value;
    return;
  }
  throw typeError(`'${typeName(container)}' object does not support item assignment`);
}

/** The value as a `list`, or the `AttributeError` for a list method on something else. */
export function asList(value: Py, method: string): Py[] {
  if (Array.isArray(value)) return value;
  throw noAttribute(value, method);
}

/** The value as a `dict`, or the `AttributeError` for a dict method on something else. */
export function asDict(value: Py, method: string): PyDict {
  if (value instanceof PyDict) return value;
  throw noAttribute(value, method);
}

/** Iterate as a `for` loop does. */
export function iter(value: Py): Py[] {
  if (Array.isArray(value)) return value;
  if (value instanceof PyTuple) return [...value.items];
  if (value instanceof PyDict) return value.keys();
  if (typeof value === "string") return Array.from(value);
  throw typeError(`'${typeName(value)}' object is not iterable`);
}
