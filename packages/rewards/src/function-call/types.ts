/**
 * One function call as a model wrote it: a name and named arguments. `V` is whatever value
 * model the caller parses arguments into (plain JSON, or a richer model that keeps int and
 * float apart).
 */
export interface FunctionCall<V> {
  readonly name: string;
  readonly args: ReadonlyMap<string, V>;
}

/**
 * What a correct call looks like: the function's name and, for every parameter the reference
 * answer mentions, a description `A` of the values it accepts (often a list of alternatives).
 */
export interface ExpectedCall<A> {
  readonly name: string;
  readonly params: ReadonlyMap<string, A>;
}

/** The declared interface of a function: its parameters (with their schemas) and which are required. */
export interface FunctionSignature<S> {
  readonly name: string;
  readonly params: ReadonlyMap<string, S>;
  readonly required: readonly string[];
}

/**
 * Why a call was rejected. `code` is machine-readable and stable:
 * - `wrong_count`: the output has a different number of calls than the mode demands;
 * - `wrong_func_name`: the call names a different function;
 * - `unknown_function`: the reference names a function the declarations do not have;
 * - `missing_required`: a parameter the signature requires is absent;
 * - `unexpected_param`: an argument the signature or the reference does not know;
 * - `missing_optional`: a parameter the reference expects is absent and may not be omitted;
 * - `cannot_find_match`: (parallel) no unused call matches one of the expected calls;
 * - anything else: a value rejected by the caller's argument check (e.g. `type_error:simple`).
 */
export interface Rejection {
  readonly valid: false;
  readonly code: string;
  readonly message: string;
  /** Per-candidate reasons, for `cannot_find_match`. */
  readonly details?: readonly Rejection[];
}

export type Verdict = { readonly valid: true } | Rejection;

export const ACCEPT: Verdict = Object.freeze({ valid: true });

export function reject(code: string, message: string, details?: readonly Rejection[]): Rejection {
  return details === undefined ? { valid: false, code, message } : { valid: false, code, message, details };
}

/**
 * The language- and benchmark-specific half of matching: how argument values compare with the
 * reference, and when a reference parameter may be left out.
 */
export interface ArgumentRules<V, A, S> {
  /** May this reference parameter be left out of the call? */
  mayOmit(acceptable: A): boolean;
  /** Check one argument against the values the reference accepts for it, given its declared schema. */
  checkArgument(param: string, value: V, acceptable: A, schema: S): Verdict;
  /**
   * The name a model is expected to write for a declared function (some providers cannot use
   * dots in tool names and write underscores). Identity by default.
   */
  nameInOutput?(declaredName: string): string;
}
