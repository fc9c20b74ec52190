/**
 * A Python exception raised by code that models Python (a benchmark's tools, its checker).
 * `text` is `str(exception)`, which is what an agent reads after `Error: `.
 */
export class PyException extends Error {
  override readonly name = "PyException";
  constructor(
    /** The Python exception class: `ValueError`, `TypeError`, `KeyError`, … */
    readonly pyType: string,
    readonly text: string,
  ) {
    super(`${pyType}: ${text}`);
  }
}

export function valueError(text: string): PyException {
  return new PyException("ValueError", text);
}

export function typeError(text: string): PyException {
  return new PyException("TypeError", text);
}

export function attributeError(text: string): PyException {
  return new PyException("AttributeError", text);
}

/** A machine-readable code for a Python exception class: `ValueError` → `VALUE_ERROR`. */
export function errorCode(pyType: string): string {
  return pyType
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toUpperCase();
}
