/**
 * What a cancelled wait rejects with: the signal's reason when it is an `Error` (an `abort()`
 * without one gives a `DOMException` named `AbortError`), else an `AbortError` that carries the
 * reason as its cause, so callers can always test `error.name`.
 */
export function abortReason(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  const error = new DOMException("The operation was aborted.", "AbortError");
  if (signal.reason !== undefined) Object.defineProperty(error, "cause", { value: signal.reason });
  return error;
}
