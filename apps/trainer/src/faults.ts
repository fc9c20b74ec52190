// What `envace` prints when a command fails. The user's faults (a bad option, config, file or
// record, a server that does not answer) get their message alone; anything else is a bug, whose
// stack is printed on request. Loaded by cli.ts only once an error reaches it.
import { inspect } from "node:util";
import { EnvaceError, InvariantError } from "@envace/errors";

/**
 * A command line that cannot run, found once the command has started (a model spec, a category):
 * exit 2, like a parsing error. So is a `RunDirectoryError` of `@envace/records` (code
 * `run-directory`: an --out made with other options, or by an older version).
 */
export class UsageError extends EnvaceError {
  override readonly code = "usage";
}

export type FaultKind = "usage" | "input" | "bug";

/** Error codes of Node's file system calls that mean a path the user gave cannot be used. */
const FILE_CODES = new Set(["ENOENT", "ENOTDIR", "EISDIR", "EACCES", "EPERM", "EEXIST", "ENOTEMPTY", "EROFS", "ENOSPC", "EMFILE", "ENAMETOOLONG", "ELOOP"]);

/** Error codes of sockets and DNS that mean a server cannot be reached. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EPIPE",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A failed file system call: Node's errors carry `code` and `syscall` (and the path in the message). */
function isFileError(error: unknown): boolean {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === "string" && FILE_CODES.has(codeOf(error) ?? "");
}

/** A connection that failed or timed out, raised by `fetch` (its cause holds the socket's code) or by a timeout signal. */
function isNetworkError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (NETWORK_CODES.has(codeOf(e) ?? "")) return true;
    if (e instanceof DOMException && e.name === "TimeoutError") return true;
  }
  return false;
}

export function faultKind(error: unknown): FaultKind {
  if (error instanceof UsageError || (error instanceof EnvaceError && error.code === "run-directory")) return "usage";
  // Every EnvaceError but a failed internal check is a kind of failure with a message written
  // for the person running the command (a bad input, a server's answer, a diverged run).
  if (error instanceof EnvaceError) return error instanceof InvariantError ? "bug" : "input";
  if (isFileError(error) || isNetworkError(error)) return "input";
  return "bug";
}

/** A network error's message with the cause that names the socket's code, e.g. `fetch failed (ECONNREFUSED)`. */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = codeOf(error.cause);
  return error instanceof TypeError && code !== undefined && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

/**
 * The lines `envace <command>` prints for `error` on stderr, and the exit code. The user's faults
 * print their message (several lines only where it lists several problems, as a config can);
 * a bug prints its first line and how to see the stack. `debug` (`--log-level debug`) adds the stack to either.
 */
export function describeFault(command: string, error: unknown, debug: boolean): { lines: string[]; exitCode: number } {
  const kind = faultKind(error);
  const message = messageOf(error).trim() || (error instanceof Error ? error.name : "failed");
  const head = `envace ${command}`.trim();
  const lines = kind === "bug" ? [`${head}: ${message.split("\n")[0]!}`] : [`${head}: ${message}`];
  if (kind === "usage") lines.push(`(see ${head} --help)`);
  if (debug) lines.push(inspect(error, { depth: 4 }));
  else if (kind === "bug") lines.push("(run with --log-level debug for the stack trace)");
  return { lines, exitCode: kind === "usage" ? 2 : 1 };
}
