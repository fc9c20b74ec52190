import { attributeError, hashKey, PyHashDict, type PyException, type PyObject, pyTypeName } from "@envace/python-text";

/**
 * Small pieces of Python semantics the environments lean on beyond `@envace/python-text`'s
 * operators: the `AttributeError` for a method called on the wrong type, `dict.get`. Environments
 * receive whatever values a model sends, so each upstream method's behaviour on odd input is
 * reproduced, errors included.
 */

/** The value as a `str`, or the `AttributeError` Python raises when a str method is called on something else. */
export function asStr(value: PyObject, method: string): string {
  if (typeof value === "string") return value;
  throw noAttribute(value, method);
}

export function noAttribute(value: PyObject, attribute: string): PyException {
  return attributeError(`'${pyTypeName(value)}' object has no attribute '${attribute}'`);
}

/** `d.get(key, fallback)` on a dict (anything else has no `get`). */
export function dictGet(d: PyObject, key: PyObject, fallback: PyObject = null): PyObject {
  if (!(d instanceof PyHashDict)) throw noAttribute(d, "get");
  hashKey(key);
  return d.has(key) ? d.get(key)! : fallback;
}

/** The value as a `list`, or the `AttributeError` for a list method on something else. */
export function asList(value: PyObject, method: string): PyObject[] {
  if (Array.isArray(value)) return value;
  throw noAttribute(value, method);
}

/** The value as a `dict`, or the `AttributeError` for a dict method on something else. */
export function asDict(value: PyObject, method: string): PyHashDict {
  if (value instanceof PyHashDict) return value;
  throw noAttribute(value, method);
}
