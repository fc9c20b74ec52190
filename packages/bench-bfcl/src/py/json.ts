import { jsonLoads, type JsonModel } from "@envace/python-text";
import { float, int, PyDict } from "./value.js";
import type { Py } from "./value.js";

/** `json.loads`' values as `Py`: ints as `number` (a `bigint` past 2^53), floats as `PyFloat`. */
const pyModel: JsonModel<Py, PyDict> = {
  int: (literal) => {
    const n = Number(literal);
    return Number.isSafeInteger(n) ? int(n) : int(BigInt(literal));
  },
  float,
  dict: () => new PyDict(),
  set: (dict, key, value) => dict.set(key, value),
  list: (items) => items,
};

/**
 * Parse JSON as Python's `json.loads` does: a number with a fraction or an exponent is a
 * `float` even when integral (`1.0`), integers are exact at any size, `NaN`, `Infinity` and
 * `-Infinity` are accepted, and objects become insertion-ordered dicts. Syntax errors are
 * `JsonDecodeError`s (from `@envace/python-text`) with Python's message.
 */
export function parsePyJson(text: string): Py {
  return jsonLoads(text, pyModel);
}
