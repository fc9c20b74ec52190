import { z } from "zod";
import type { JsonValue, Termination, ToolError } from "@envace/protocol";
import { excerpt, isJsonObject, jsonTypeName, tryParseJson } from "./json-value.js";
import { splitReasoning, THINK_TAGS, type ReasoningTags } from "./reasoning.js";

/** The typed failures of parsing a Rehearse output. Any of them ends the rollout with `env_error`. */
export const RehearseParseErrorCode = z.enum(["NO_EXECUTION_RESULT", "JSON_DECODE_ERROR", "INVALID_RESULT"]);
export type RehearseParseErrorCode = z.infer<typeof RehearseParseErrorCode>;

/** The detail of a `max_tokens` ending on a Rehearse output cut off at its token limit (see `unfold`). */
export const REHEARSE_TRUNCATED_DETAIL = "rehearse response";

/**
 * Whether a rollout ended on a Rehearse output it could not read, and how: `malformed` (an
 * `env_error` with a `RehearseParseErrorCode`) or `truncated` (cut off at its token limit).
 * `unfold` ends a rollout this way right after the call whose output it was.
 */
export function unreadRehearseEnding(termination: Termination): "malformed" | "truncated" | undefined {
  if (termination.reason === "env_error" && RehearseParseErrorCode.safeParse(termination.code).success) return "malformed";
  if (termination.reason === "max_tokens" && termination.detail === REHEARSE_TRUNCATED_DETAIL) return "truncated";
  return undefined;
}

export interface RehearseParserOptions {
  /** Tags around the predicted result. Default `<execution_result>`, `</execution_result>`. */
  resultTags?: { open: string; close: string };
  /** Reasoning tags to strip from the start of the output, or `false`. Default `<think>`. */
  reasoningTags?: ReasoningTags | false;
}

/** What a Rehearse output means, never an exception. */
export type RehearseOutput =
  /** The predicted JSON result of the call. */
  | { kind: "result"; content: JsonValue; reasoning: string | undefined }
  /** The call is predicted to fail, with this typed error. */
  | { kind: "tool_error"; error: ToolError; reasoning: string | undefined }
  /** Malformed output. */
  | { kind: "error"; code: RehearseParseErrorCode; detail: string; reasoning: string | undefined };

const RESULT_TAGS = { open: "<execution_result>", close: "</execution_result>" };

/** The code of a predicted error written as a bare string, `{"error": "…"}`. */
export const DEFAULT_PREDICTED_ERROR_CODE = "EXECUTION_ERROR";

/**
 * Parse a Rehearse output: optional leading reasoning, then `<execution_result>` holding a JSON
 * object or array (a surrounding Markdown code fence is tolerated; a block left open at the end is
 * read to the end; later blocks are ignored).
 *
 * A result that is an object whose only key is `error` predicts a failure of the call:
 * `{"error": {"code": "INSUFFICIENT_FUNDS", "message": "…"}}`, or `{"error": "…"}` with code
 * `EXECUTION_ERROR`. Objects with `error` next to other keys are ordinary results.
 *
 * Failures: `NO_EXECUTION_RESULT` (no block, or reasoning that never closed),
 * `JSON_DECODE_ERROR` (the block is not JSON), `INVALID_RESULT` (JSON that is neither an object nor
 * an array, or a malformed error object).
 */
export function parseRehearseOutput(text: string, options: RehearseParserOptions = {}): RehearseOutput {
  const tags = options.resultTags ?? RESULT_TAGS;
  const split = splitReasoning(text, options.reasoningTags ?? THINK_TAGS);
  const reasoning = split.reasoning;

  if (!split.closed) return fail(reasoning, "NO_EXECUTION_RESULT", "the reasoning block never closed");
  const open = split.content.indexOf(tags.open);
  if (open < 0) return fail(reasoning, "NO_EXECUTION_RESULT", `no ${tags.open} in ${excerpt(split.content) || "an empty output"}`);
  const bodyStart = open + tags.open.length;
  const close = split.content.indexOf(tags.close, bodyStart);
  const body = stripFence(split.content.slice(bodyStart, close < 0 ? undefined : close).trim());
  if (body.length === 0) return fail(reasoning, "NO_EXECUTION_RESULT", `${tags.open} is empty`);

  const parsed = tryParseJson(body);
  if (!parsed.ok) return fail(reasoning, "JSON_DECODE_ERROR", `${parsed.error} in ${excerpt(body)}`);
  const value = parsed.value;
  if (!isJsonObject(value) && !Array.isArray(value)) {
    return fail(reasoning, "INVALID_RESULT", `the result is a JSON ${jsonTypeName(value)}; expected an object or an array`);
  }
  if (isJsonObject(value) && Object.keys(value).length === 1 && Object.hasOwn(value, "error")) {
    const error = value.error;
    if (typeof error === "string") return { kind: "tool_error", error: { code: DEFAULT_PREDICTED_ERROR_CODE, message: error }, reasoning };
    if (isJsonObject(error) && typeof error.code === "string" && error.code.length > 0 && typeof error.message === "string") {
      return { kind: "tool_error", error: { code: error.code, message: error.message }, reasoning };
    }
    return fail(reasoning, "INVALID_RESULT", 'a predicted error must be {"error": {"code": "…", "message": "…"}} or {"error": "…"}');
  }
  return { kind: "result", content: value as JsonValue, reasoning };
}

function fail(reasoning: string | undefined, code: RehearseParseErrorCode, detail: string): RehearseOutput {
  return { kind: "error", code, detail, reasoning };
}

function stripFence(body: string): string {
  const fenced = /^```[A-Za-z]*\n([\s\S]*?)\n?```$/.exec(body);
  return fenced === null ? body : fenced[1]!.trim();
}
