import { hashDictModel, jsonLoads, type PyObject } from "@envace/python-text";

/**
 * Parse JSON as Python's `json.loads` does: a number with a fraction or an exponent is a
 * `float` even when integral (`1.0`), integers are exact at any size, `NaN`, `Infinity` and
 * `-Infinity` are accepted, and objects become insertion-ordered `PyHashDict`s (the environments
 * key some of them by ints later, as upstream does). Syntax errors are `JsonDecodeError`s with
 * Python's message.
 */
export function parsePyJson(text: string): PyObject {
  return jsonLoads(text, hashDictModel);
}
