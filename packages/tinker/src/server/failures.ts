import { ContextLengthError, InputError } from "@envace/protocol";
import { TrainingInputError } from "@envace/training";
import type { FailureCategory } from "../errors.js";
import { TinkerApiError } from "./options.js";

/** Whether a failure is the request's fault (a token outside the vocabulary, stop strings the sampler cannot apply, a missing checkpoint). */
export function isUserFault(error: unknown): boolean {
  if (error instanceof TinkerApiError) return error.status < 500;
  return error instanceof InputError || error instanceof TrainingInputError || error instanceof ContextLengthError;
}

/** An error from the file system or the OS, whose message names server paths. */
function isSystemError(error: unknown): boolean {
  return error instanceof Error && ("syscall" in error || "path" in error || "errno" in error);
}

/**
 * What a failed request's future reports: the reason with its category, `route: …` first. A
 * system error is reported without its message (it names the server's files), which goes to
 * `onError` instead.
 */
export function failureOf(error: unknown, route: string, onError: (error: unknown, context: string) => void): { message: string; category: FailureCategory } {
  const category: FailureCategory = isUserFault(error) ? "user" : "server";
  let reason: string;
  if (isSystemError(error)) {
    onError(error, route);
    reason = "the server could not read or write its files (its log has the cause)";
  } else {
    reason = error instanceof Error ? error.message : String(error);
    if (category === "server") onError(error, route);
  }
  return { message: reason.startsWith(`${route}: `) ? reason : `${route}: ${reason}`, category };
}
