import { EnvaceError } from "@envace/errors";

/**
 * A Python exception raised by code that models Python (a benchmark's tools, its checker).
 * `text` is `str(exception)`, which is what an agent reads after `Error: `.
 */
export class PyException extends EnvaceError {
  override readonly code = "python-exception";
  constructor(
    /** The Python exception class: `ValueError`, `TypeError`, `KeyError`, … */
    readonly pyType: string,
    readonly text: string,
  ) {
    super(`${pyType}: ${text}`);
  }
}

/**
 * Input nested deeper than a reader allows (Python raises `RecursionError` there too): a typed
 * error naming the limit instead of a stack overflow.
 */
export class DepthLimitError extends PyException {
  override readonly name = "DepthLimitError";
  constructor(
    /** The deepest nesting the reader accepts. */
    readonly limit: number,
    /** What was too deep, for the message: `the JSON text`, `the expression`. */
    what: string,
  ) {
    super("RecursionError", `${what} nests deeper than ${limit} levels`);
  }
}

/**
 * Runs `fn` the way Python's `try: … except Exception as e:` reads it: the exception raised, as
 * Python prints it (`ValueError: text`), or `undefined` when `fn` returned. Errors that are not
 * Python exceptions propagate.
 */
export function exceptionText(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof PyException) return error.message;
    throw error;
  }
  return undefined;
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
  return pyType.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}
