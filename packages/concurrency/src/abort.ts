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

/**
 * Whether a signal has aborted, as a plain field that one listener keeps up to date. Reading
 * `AbortSignal.aborted` costs more than a rollout step's own bookkeeping, so loops that check at
 * every step read this instead. Call `dispose` when done, so a long-lived signal does not collect
 * listeners.
 */
export class AbortFlag {
  aborted: boolean;
  readonly signal: AbortSignal | undefined;
  readonly #onAbort = (): void => {
    this.aborted = true;
  };

  constructor(signal?: AbortSignal) {
    this.signal = signal;
    this.aborted = signal?.aborted === true;
    if (signal !== undefined && !this.aborted) signal.addEventListener("abort", this.#onAbort, { once: true });
  }

  /** Throw the signal's reason (as `signal.throwIfAborted()` does) if it has aborted. */
  throwIfAborted(): void {
    if (this.aborted) this.signal?.throwIfAborted();
  }

  dispose(): void {
    this.signal?.removeEventListener("abort", this.#onAbort);
  }
}
