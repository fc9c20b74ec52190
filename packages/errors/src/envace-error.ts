/**
 * The one base of EnvACE's errors. `code` names the kind of failure in a form a program can
 * switch on — the message is for people and may be reworded, the code may not. `isRetryable`
 * says whether making the same call again later may succeed.
 *
 * Each subclass fixes its code with a literal, `override readonly code = "checkpoint"`, so the
 * type of `error.code` narrows with `instanceof`.
 */
export abstract class EnvaceError extends Error {
  /** The kind of failure: lower-case words joined by hyphens, stable across releases. */
  abstract readonly code: string;
  /** True where the same call may succeed later: a rate limit, a server error, a timeout. */
  readonly isRetryable: boolean = false;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    // A stack trace and `String(error)` then name the subclass without each repeating its name.
    this.name = new.target.name;
  }
}

/**
 * A check of the program's own logic failed: a state the code never builds, a shape two of its
 * parts disagree on. Nothing the user gave can cause it or fix it; it is a bug to report.
 */
export class InvariantError extends EnvaceError {
  override readonly code = "invariant";
}

/**
 * A failure about one place, a file or a field's path, that the message starts with:
 * `where: message`. Subclasses fix the code, as with `EnvaceError`.
 */
export abstract class LocatedError extends EnvaceError {
  constructor(
    /** The file or field path the failure is about. */
    readonly where: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${where}: ${message}`, options);
  }
}

/** HTTP statuses worth another try: timeout (408), conflict (409), rate limit (429) and server errors (5xx). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
