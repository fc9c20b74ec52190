import type { PyObject } from "@envace/python-text";
import { BfclDataError } from "./errors.js";
import { isIrrelevance, isRelevanceOrIrrelevance } from "./categories.js";
import { checkAst, languageOf } from "./checker/ast.js";
import type { AstCheckOptions } from "./checker/ast.js";
import type { SingleTurnEntry } from "./data.js";
import { DecodeError, decodeSingleTurnResult, OutputFormatError } from "./decode.js";
import type { DecodedCall } from "./decode.js";
import type { ExecutedCall } from "./multi-turn/checker.js";

/** The verdict on one entry, as a line of `entries.jsonl`. */
export interface EntryVerdict {
  readonly id: string;
  readonly category: string;
  readonly valid: boolean;
  /** Why the entry failed (upstream's error type and message), or null. */
  readonly error: string | null;
  /** Multi-turn: the model's calls with their results, turn by turn. */
  readonly turns?: readonly (readonly ExecutedCall[])[];
}

/** A single-turn output: decoded calls, or the reason it could not be decoded. */
export type SingleTurnOutput = { readonly calls: readonly DecodedCall[] } | { readonly decodeError: string; readonly wrongFormat: boolean };

/** Decode a saved result (any upstream form) for a single-turn entry. */
export function decodeSingleTurnOutput(entry: SingleTurnEntry, result: PyObject): SingleTurnOutput {
  try {
    return { calls: decodeSingleTurnResult(result, languageOf(entry.category)) };
  } catch (error) {
    if (error instanceof DecodeError) return { decodeError: error.message, wrongFormat: error instanceof OutputFormatError };
    throw error;
  }
}

/**
 * Score one single-turn entry as upstream does: relevance and irrelevance by whether any call
 * was decoded, the other categories with the AST checker.
 */
export function scoreSingleTurn(entry: SingleTurnEntry, output: SingleTurnOutput, options: AstCheckOptions = {}): EntryVerdict {
  const verdict = (valid: boolean, error: string | null): EntryVerdict => ({ id: entry.id, category: entry.category, valid, error });
  if (isRelevanceOrIrrelevance(entry.category)) {
    const madeCall = "calls" in output && output.calls.length > 0;
    if (isIrrelevance(entry.category)) {
      return verdict(!madeCall, madeCall ? "irrelevance_error:decoder_success: Valid syntax. Successfully decode AST when it should not." : null);
    }
    return verdict(madeCall, madeCall ? null : `relevance_error:decoder_failed: ${"decodeError" in output ? output.decodeError : "no function call"}`);
  }
  if ("decodeError" in output) {
    const type = output.wrongFormat ? "ast_decoder:decoder_wrong_output_format" : "ast_decoder:decoder_failed";
    return verdict(false, `${type}: ${output.decodeError}`);
  }
  if (entry.answer === undefined) throw new BfclDataError(`${entry.id}: no reference answer to check against`);
  const checked = checkAst({ category: entry.category, functions: entry.functions, output: output.calls, answer: entry.answer, options });
  return verdict(checked.valid, checked.valid ? null : `${checked.errorType}: ${checked.error}`);
}
