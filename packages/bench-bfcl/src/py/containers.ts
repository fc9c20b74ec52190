import { pyRepr } from "./repr.js";
import { codePointLength, codePoints } from "./strings.js";
import { isInt, pyEquals, PyDict, PyError, PySet, PyTuple, typeError, typeName } from "./value.js";
import type { Py } from "./value.js";

/**
 * Python's container protocol on `Py` values: `len`, iteration, `x[i]`, `x in y`. BFCL's
 * checker indexes reference answers without checking their shape, so a string where a list
 * was expected is iterated character by character, as in Python.
 */

/** `len(value)`. */
export function len(value: Py): number {
  if (typeof value === "string") return codePointLength(value);
  if (Array.isArray(value)) return value.length;
  if (value instanceof PyTuple) return value.items.length;
  if (value instanceof PyDict || value instanceof PySet) return value.size;
  throw typeError(`object of type '${typeName(value)}' has no len()`);
}

/** `list(value)`: the items iteration yields. */
export function iterate(value: Py): Py[] {
  if (typeof value === "string") return codePoints(value);
  if (Array.isArray(value)) return value;
  if (value instanceof PyTuple) return [...value.items];
  if (value instanceof PyDict) return value.keys();
  if (value instanceof PySet) return [...value];
  throw typeError(`'${typeName(value)}' object is not iterable`);
}

/** `value[key]`. */
export function getItem(value: Py, key: Py): Py {
  if (value instanceof PyDict) {
    if (!value.has(key)) throw new PyError("KeyError", pyRepr(key));
    return value.get(key)!;
  }
  const sequence = typeof value === "string" ? codePoints(value) : Array.isArray(value) ? value : value instanceof PyTuple ? value.items : undefined;
  if (sequence === undefined) throw typeError(`'${typeName(value)}' object is not subscriptable`);
  if (typeof key === "boolean") key = key ? 1 : 0;
  if (!isInt(key)) throw typeError(`${typeName(value)} indices must be integers or slices, not ${typeName(key)}`);
  const n = Number(key);
  const index = n < 0 ? sequence.length + n : n;
  if (index < 0 || index >= sequence.length) throw new PyError("IndexError", `${typeName(value)} index out of range`);
  return sequence[index]!;
}

/** `item in container`. */
export function contains(container: Py, item: Py): boolean {
  if (typeof container === "string") {
    if (typeof item !== "string") throw typeError(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return container.includes(item);
  }
  if (container instanceof PyDict || container instanceof PySet) return container.has(item);
  const items = Array.isArray(container) ? container : container instanceof PyTuple ? container.items : undefined;
  if (items === undefined) throw typeError(`argument of type '${typeName(container)}' is not iterable`);
  return items.some((element) => element === item || pyEquals(element, item));
}
