import { pyEquals, pyRepr } from "@envace/python-text";
import { BfclDataError } from "../errors.js";
import type { MultiTurnEntry } from "../data.js";
import type { LongContextFiller } from "./environment.js";
import { createSession, EnvironmentSet } from "./runtime.js";

/** One executed call and the result string it produced. */
export interface ExecutedCall {
  readonly call: string;
  readonly result: string;
}

export interface MultiTurnVerdict {
  readonly valid: boolean;
  /** Upstream's `error_type`, e.g. `multi_turn:instance_state_mismatch`. */
  readonly errorType?: string;
  readonly error?: string;
  /** The model's calls and their results, turn by turn, as far as checking went. */
  readonly turns: readonly (readonly ExecutedCall[])[];
}

/**
 * Model calls for one entry: for each turn, the decoded steps, each a list of call strings.
 * Steps that failed to decode or decoded to nothing are left out, as upstream drops them.
 */
export type MultiTurnCalls = readonly (readonly (readonly string[])[])[];

export interface MultiTurnCheckOptions {
  /** The long-context filler, required for long-context entries. */
  readonly filler?: LongContextFiller;
}

/**
 * Upstream's multi-turn checker. The model's calls and the gold calls run on two separate sets
 * of persistent instances; after each turn with gold calls, every instance's public attributes
 * must equal the gold instance's (state check), and every gold result must appear among the
 * model's results so far, counting duplicates (response check). A turn whose gold list is empty
 * (miss_func, miss_param) is executed but not checked. A model that ran out of turns (20-step
 * limit) fails.
 */
export function checkMultiTurn(entry: MultiTurnEntry, modelTurns: MultiTurnCalls, options: MultiTurnCheckOptions = {}): MultiTurnVerdict {
  if (modelTurns.length !== entry.groundTruth.length) {
    return {
      valid: false,
      errorType: "multi_turn:force_terminated",
      error: `Model was force-terminated during inference phase. The length of the model result turns (${modelTurns.length}) does not match the length of the ground truth turns (${entry.groundTruth.length}).`,
      turns: [],
    };
  }
  if (entry.longContext && options.filler === undefined) throw new BfclDataError(`${entry.id}: long-context entries need the long-context filler`);
  const session = createSession(options.filler);
  const setup = { involvedClasses: entry.involvedClasses, initialConfig: entry.initialConfig, longContext: entry.longContext, session };
  const model = new EnvironmentSet(setup);
  const gold = new EnvironmentSet(setup);
  const turns: ExecutedCall[][] = [];
  const allModelResults: string[] = [];
  for (const [index, goldCalls] of entry.groundTruth.entries()) {
    const steps = modelTurns[index]!;
    const executed = steps.flatMap((step) => step.map((call) => ({ call, result: model.execute(call) })));
    turns.push(executed);
    allModelResults.push(...executed.map((e) => e.result));
    const goldResults = goldCalls.map((call) => gold.execute(call));
    if (goldCalls.length === 0) continue;
    if (steps.length === 0) {
      return { valid: false, errorType: "multi_turn:empty_turn_model_response", error: `Model response list is empty for turn ${index}`, turns };
    }
    const stateError = compareStates(model, gold);
    if (stateError !== undefined) return { valid: false, errorType: "multi_turn:instance_state_mismatch", error: stateError, turns };
    const missing = missingResults(goldResults, allModelResults);
    if (missing.length > 0) {
      return {
        valid: false,
        errorType: "multi_turn:execution_response_mismatch",
        error: `Model response execution results so far does not contain all the ground truth response execution results for turn ${index}. Missing: ${JSON.stringify(missing)}`,
        turns,
      };
    }
  }
  return { valid: true, turns };
}

function compareStates(model: EnvironmentSet, gold: EnvironmentSet): string | undefined {
  const modelStates = model.states();
  for (const [className, goldState] of gold.states()) {
    const modelState = modelStates.get(className)!;
    const differences: string[] = [];
    for (const [attribute, expected] of goldState) {
      const actual = modelState.get(attribute);
      if (actual === undefined || !pyEquals(actual, expected)) {
        differences.push(`${attribute}: model ${actual === undefined ? "<missing>" : pyRepr(actual)}, ground truth ${pyRepr(expected)}`);
      }
    }
    if (differences.length > 0) {
      return `Model instance for ${className} does not match the state with ground truth instance. ${differences.join("; ")}`;
    }
  }
  return undefined;
}

/** Gold results not found among the model's, each model result matching at most one gold result. */
function missingResults(gold: readonly string[], model: readonly string[]): string[] {
  const pool = [...model];
  const missing: string[] = [];
  for (const result of gold) {
    const index = pool.indexOf(result);
    if (index < 0) missing.push(result);
    else pool.splice(index, 1);
  }
  return missing;
}

/** The oracle's calls: each turn's gold calls as one step; no step where the gold list is empty. */
export function oracleMultiTurnCalls(entry: MultiTurnEntry): MultiTurnCalls {
  return entry.groundTruth.map((calls) => (calls.length > 0 ? [calls] : []));
}
