import {
  SamplingParams,
  type JsonValue,
  type Message,
  type Policy,
  type SamplingParamsInput,
  type Task,
  type Tokenizer,
  type ToolResult,
  type Trajectory,
} from "@envace/protocol";
import { RehearsalEnvironment, stepMessages, type RehearsalEnvironmentOptions } from "@envace/trajectory";
import { canonicalJson } from "@envace/records";
import { REHEARSAL_SAMPLING } from "./setting.js";
import { tokenCounter } from "./tokens.js";
import { MeteredPolicy, type Usage } from "./usage.js";
import { z } from "zod";

/** The three agreement measures of one rehearsed result against the real one. */
export interface Agreement {
  /** The JSON the agent reads is identical (object keys in any order). */
  exact: boolean;
  /** The same shape: results with the same keys (values ignored), or errors with the same code. */
  keys: boolean;
  /** Both succeeded or both failed. */
  status: boolean;
}

/** The JSON an agent reads for a result: the content, or `{"error": {"code", "message"}}`. */
function visible(result: ToolResult): JsonValue {
  return result.status === "ok" ? result.content : { error: { code: result.error.code, message: result.error.message } };
}

/** The key shape of a JSON value: an object's key set; an array's union of its object elements' key sets; else its type. */
function keyShape(value: JsonValue): string {
  if (value === null) return "null";
  if (Array.isArray(value)) {
    const keys = new Set<string>();
    for (const item of value) if (item !== null && typeof item === "object" && !Array.isArray(item)) for (const key of Object.keys(item)) keys.add(key);
    return `array:${JSON.stringify([...keys].sort())}`;
  }
  if (typeof value === "object") return `object:${JSON.stringify(Object.keys(value).sort())}`;
  return typeof value;
}

/** Compare a rehearsed result with the real result of the same call. */
export function compareResults(rehearsed: ToolResult, real: ToolResult): Agreement {
  const status = rehearsed.status === real.status;
  const exact = canonicalJson(visible(rehearsed)) === canonicalJson(visible(real));
  let keys: boolean;
  if (rehearsed.status === "ok" && real.status === "ok") keys = keyShape(rehearsed.content) === keyShape(real.content);
  else if (rehearsed.status === "error" && real.status === "error") keys = rehearsed.error.code === real.error.code;
  else keys = false;
  return { exact, keys, status };
}

/**
 * One grounded call of a committed execution and what the policy, rehearsing the same call from
 * the same history, predicted for it. `answer`: `model` (a prediction was read), `unreadable`
 * (the Rehearse output could not be read or was cut off: no agreement at all), or `refused` (the
 * call validator answered without asking the model: not a measure of the policy, left out of rates).
 */
export interface FidelityComparison extends Agreement {
  tool: string;
  /** 0-based index of the step that made the call. */
  step: number;
  callId: string;
  answer: "model" | "unreadable" | "refused";
  real: ToolResult;
  rehearsed: ToolResult | null;
}

export interface ProbeOptions {
  /** The committed trajectory (grounded outcomes). */
  trajectory: Trajectory;
  /** The task as executed (its tools are the rehearsal whitelist). */
  task: Task;
  policy: Policy;
  /** Rehearse sampling. Default: private rehearsal's (temperature 1.0). */
  sampling?: SamplingParamsInput;
  /** Rehearse-role prompt, examples and parser, as for `rehearsal()`. */
  rehearse?: Omit<RehearsalEnvironmentOptions, "policy">;
  tokenizer?: Tokenizer;
  signal?: AbortSignal;
}

/**
 * Rehearsal fidelity by probing: after a committed execution, every grounded call is rehearsed
 * once more by the policy from exactly the history it was made in (the conversation before its Act
 * turn, and that turn), and the prediction is compared with the real result. Probing compares like
 * with like, which matching the calls of earlier private attempts could not: an attempt's history
 * diverges from the committed one after its first different step. Probe generations are counted in
 * `usage`, apart from the method's own.
 */
export async function probeFidelity(options: ProbeOptions): Promise<{ comparisons: FidelityComparison[]; usage: Usage }> {
  const { trajectory, task, signal } = options;
  const policy = MeteredPolicy.wrap(options.policy, tokenCounter(options.tokenizer));
  const environment = new RehearsalEnvironment({ ...options.rehearse, policy });
  environment.reset(task);
  const sampling = SamplingParams.parse({ ...REHEARSAL_SAMPLING.rehearse, ...options.sampling });

  const probes: Promise<FidelityComparison>[] = [];
  const history: Message[] = [...trajectory.context];
  trajectory.steps.forEach((step, index) => {
    if (step.type === "act") {
      const before = [...history];
      for (const outcome of step.outcomes) {
        if (outcome.provenance !== "grounded") continue;
        const real = outcome.result;
        probes.push(
          environment.rehearse(outcome.call, { history: before, latestAct: step.message }, sampling, signal).then((answer) => {
            const base = { tool: outcome.call.name, step: index, callId: outcome.call.id, real };
            // A prediction that could not be read, or not even asked for (the prompt overflowed the context), disagrees.
            if (answer.kind === "failed" || answer.kind === "too_long")
              return { ...base, answer: "unreadable", rehearsed: null, exact: false, keys: false, status: false };
            return { ...base, answer: answer.kind === "rejected" ? "refused" : "model", rehearsed: answer.result, ...compareResults(answer.result, real) };
          }),
        );
      }
    }
    history.push(...stepMessages(step));
  });
  const comparisons = await Promise.all(probes);
  return { comparisons, usage: policy.usage };
}

/** Agreement counts and rates of one tool (or of all tools together). */
export interface FidelityStats {
  /** Comparisons with a model answer or an unreadable one: the denominator of the rates. */
  compared: number;
  exact: number;
  keys: number;
  status: number;
  /** Model answers that could not be read (counted as disagreeing). */
  unreadable: number;
  /** Calls the validator refused without asking the model (not in the rates). */
  refused: number;
  exactRate: number | null;
  keysRate: number | null;
  statusRate: number | null;
  /**
   * Compared calls that really failed, and how many of them the Rehearse role predicted to fail.
   * The status rate alone hides this: where few real calls fail, a role that never predicts a
   * failure still agrees on the status of most calls.
   */
  failures: number;
  failuresPredicted: number;
  /** `failuresPredicted / failures`; null when no compared call failed. */
  failureRecall: number | null;
}

/** Fidelity per tool (sorted by name) and over all tools. Rates are `null` when nothing was compared. */
export interface FidelityReport {
  overall: FidelityStats;
  tools: Record<string, FidelityStats>;
}

/**
 * What aggregation needs of one comparison, as a run's records keep it. `failed`: the real call
 * failed (records written before it was kept have none, and count in no failure figure).
 */
export const FidelityRecord = z.object({
  tool: z.string(),
  answer: z.enum(["model", "unreadable", "refused"]),
  exact: z.boolean(),
  keys: z.boolean(),
  status: z.boolean(),
  failed: z.boolean().optional(),
});
export type FidelityRecord = z.infer<typeof FidelityRecord>;

/** A probe's comparison as a record: the real result reduced to whether it failed. */
export function fidelityRecord({ tool, answer, exact, keys, status, real }: FidelityComparison): FidelityRecord {
  return { tool, answer, exact, keys, status, failed: real.status === "error" };
}

export function aggregateFidelity(comparisons: readonly FidelityRecord[]): FidelityReport {
  const empty = (): Omit<FidelityStats, "exactRate" | "keysRate" | "statusRate" | "failureRecall"> => ({
    compared: 0,
    exact: 0,
    keys: 0,
    status: 0,
    unreadable: 0,
    refused: 0,
    failures: 0,
    failuresPredicted: 0,
  });
  const overall = empty();
  const byTool = new Map<string, ReturnType<typeof empty>>();
  for (const c of comparisons) {
    const tool = byTool.get(c.tool) ?? empty();
    byTool.set(c.tool, tool);
    for (const stats of [overall, tool]) {
      if (c.answer === "refused") {
        stats.refused += 1;
        continue;
      }
      stats.compared += 1;
      if (c.answer === "unreadable") stats.unreadable += 1;
      if (c.exact) stats.exact += 1;
      if (c.keys) stats.keys += 1;
      if (c.status) stats.status += 1;
      if (c.failed === true) {
        stats.failures += 1;
        // Agreeing on the status of a failed call is predicting its failure.
        if (c.status) stats.failuresPredicted += 1;
      }
    }
  }
  const rated = (s: ReturnType<typeof empty>): FidelityStats => {
    const rate = (n: number): number | null => (s.compared === 0 ? null : n / s.compared);
    return {
      ...s,
      exactRate: rate(s.exact),
      keysRate: rate(s.keys),
      statusRate: rate(s.status),
      failureRecall: s.failures === 0 ? null : s.failuresPredicted / s.failures,
    };
  };
  const tools = Object.create(null) as Record<string, FidelityStats>;
  for (const name of [...byTool.keys()].sort()) tools[name] = rated(byTool.get(name)!);
  return { overall: rated(overall), tools };
}
