import { typeError } from "./errors.js";
import type { PyDict, PyValue } from "./value.js";

/** One parameter of a Python function; a parameter with a `default` is optional. */
export interface PyParam {
  readonly name: string;
  readonly default?: PyValue;
}

/**
 * Bind keyword arguments to a Python function's parameters the way `f(**kwargs)` does, with
 * Python's own messages: an unknown name first (`f() got an unexpected keyword argument 'x'`),
 * then the missing ones (`f() missing 2 required positional arguments: 'a' and 'b'`).
 */
export function bindArguments(qualname: string, params: readonly PyParam[], kwargs: PyDict): Map<string, PyValue> {
  const known = new Set(params.map((param) => param.name));
  for (const key of kwargs.keys()) {
    if (!known.has(key)) throw typeError(`${qualname}() got an unexpected keyword argument '${key}'`);
  }
  const missing = params.filter((param) => !("default" in param) && !kwargs.has(param.name)).map((param) => `'${param.name}'`);
  if (missing.length > 0) {
    const plural = missing.length === 1 ? "argument" : "arguments";
    throw typeError(`${qualname}() missing ${missing.length} required positional ${plural}: ${listNames(missing)}`);
  }
  const bound = new Map<string, PyValue>();
  for (const param of params) bound.set(param.name, kwargs.has(param.name) ? kwargs.get(param.name)! : (param.default ?? null));
  return bound;
}

function listNames(names: readonly string[]): string {
  if (names.length === 1) return names[0]!;
  if (names.length === 2) return `${names[0]} and ${names[1]}`;
  return `${names.slice(0, -1).join(", ")}, and ${names[names.length - 1]}`;
}
