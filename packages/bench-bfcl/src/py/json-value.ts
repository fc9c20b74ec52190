import type { JsonValue } from "@envace/protocol";
import { floatRepr } from "@envace/python-text";
import { pyRepr, pyStr } from "./repr.js";
import { PyDict, PyFloat, PyOpaque, PySet, PyTuple } from "./value.js";
import type { Py } from "./value.js";

/**
 * A Python value as plain JSON for files and tool specs: floats become numbers (so `1.0` and
 * `1` are no longer told apart; write with `jsonDumps` where that matters), tuples and sets
 * arrays, dict keys strings, other objects their `repr`.
 */
export function toJsonValue(value: Py): JsonValue {
  if (value === null || typeof value === "boolean" || typeof value === "number" || typeof value === "string") return value;
  if (typeof value === "bigint") return Number(value);
  if (value instanceof PyFloat) return Number.isFinite(value.value) ? value.value : floatRepr(value.value);
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value instanceof PyTuple) return value.items.map(toJsonValue);
  if (value instanceof PySet) return [...value].map(toJsonValue);
  if (value instanceof PyDict) {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of value) out[pyStr(k)] = toJsonValue(v);
    return out;
  }
  if (value instanceof PyOpaque) return value.repr;
  return pyRepr(value);
}

/** Plain JSON (as `JSON.parse` returns it) as a Python value; integral numbers become ints. */
export function fromJsonValue(value: unknown): Py {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return Number.isInteger(value) ? value : new PyFloat(value);
  if (Array.isArray(value)) return value.map(fromJsonValue);
  if (typeof value === "object") return new PyDict(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, fromJsonValue(v)]));
  return null;
}
