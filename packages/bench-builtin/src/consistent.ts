import { EnvaceError } from "@envace/errors";
import type { JsonObject, RewardVerdict, Task, ToolResult, Trajectory } from "@envace/protocol";
import { canonicalJson } from "@envace/records";
import type { RewardFunction } from "@envace/rewards";
import { unreadRehearseEnding } from "@envace/trajectory";
import { solveRequest, type Solution } from "./families.js";
import { builtinMeta } from "./meta.js";
import { WRITE_TOOLS, type ErrorCode, type ShopResult, type ToolName } from "./tools.js";
import { mentions, transcriptOf } from "./transcript.js";

/** One call the agent made and the answer it saw, real or rehearsed. */
interface Observation {
  name: string;
  arguments: JsonObject;
  result: ToolResult;
}

/** The solver asked for a call the agent never made: the agent skipped something it needed. */
class MissingCall extends EnvaceError {
  override readonly code = "missing-call";
}

function callKey(name: string, args: JsonObject): string {
  return `${name} ${canonicalJson(args)}`;
}

/** The answers of a rollout as the shop's rule engine words them, for the gold solver to read. */
function toShopResult(result: ToolResult): ShopResult {
  if (result.status === "error") return { ok: false, error: { ...result.error, code: result.error.code as ErrorCode } };
  const content = result.content;
  // A non-object answer makes the solver fail on its first field: an incoherent world.
  return { ok: true, content: content !== null && typeof content === "object" && !Array.isArray(content) ? content : {} };
}

function observationsOf(trajectory: Trajectory): Observation[] {
  return trajectory.steps.flatMap((step) =>
    step.type === "act" ? step.outcomes.map(({ call, result }) => ({ name: call.name, arguments: call.arguments, result })) : [],
  );
}

/**
 * The gold solver run on the answers the rollout saw: what a correct agent would have done and
 * said in the world the rollout observed. `undefined` when those answers do not describe a world
 * the solver can act in (a lookup that failed where the task needs it to succeed, a missing
 * field); a `MissingCall` when the agent did not make a call the solver needed.
 */
function solveFromObservations(task: Task, observations: readonly Observation[]): { solution: Solution; calls: string[] } | undefined {
  const seen = new Map<string, ToolResult>();
  for (const o of observations) {
    const key = callKey(o.name, o.arguments);
    if (!seen.has(key)) seen.set(key, o.result);
  }
  const calls: string[] = [];
  try {
    const solution = solveRequest(builtinMeta(task).request, (name: ToolName, args: JsonObject) => {
      const key = callKey(name, args);
      const result = seen.get(key);
      if (result === undefined) throw new MissingCall(key);
      calls.push(key);
      return toShopResult(result);
    });
    return { solution, calls };
  } catch (error) {
    if (error instanceof MissingCall) throw error;
    return undefined;
  }
}

/**
 * Score a rollout by its own observations, as a judge reading the transcript would: did the
 * agent look up what the task needs, make exactly the writes those answers call for (none when
 * they show a blocker), and state the facts they make true? This is the outcome check of a
 * world the rollout itself describes, so in a self-unfolded rollout it rewards acting right on
 * rehearsed answers rather than rehearsed answers that happen to match the hidden world. With
 * grounded answers it agrees with `checkOutcome`. Components: `calls` (every call the solver
 * needed was made), `writes` (the agent's writes are exactly the solver's, in order), `info`.
 *
 * Masked, never 0, when the observed answers describe no world the solver can act in (for
 * example a rehearsed `user` lookup that says the user does not exist): nothing in the
 * transcript says what the right action was. Masked too when the rollout broke off on a Rehearse
 * output that could not be read: the imagined world stopped answering, not the agent, and a 0
 * would teach the agent to avoid the call whose answer was garbled (a write, most often).
 */
export function scoreConsistency(task: Task, trajectory: Trajectory): RewardVerdict {
  if (unreadRehearseEnding(trajectory.termination) !== undefined) {
    return { status: "masked", reason: "the rollout broke off on a Rehearse output that could not be read" };
  }
  const observations = observationsOf(trajectory);
  let solved: ReturnType<typeof solveFromObservations>;
  try {
    solved = solveFromObservations(task, observations);
  } catch {
    return { status: "scored", value: 0, components: { calls: 0, writes: 0, info: 0 } };
  }
  if (solved === undefined) return { status: "masked", reason: "the observed answers describe no world the task can be solved in" };
  const isWrite = (key: string): boolean => WRITE_TOOLS.some((tool) => key.startsWith(`${tool} `));
  const transcript = transcriptOf(trajectory);
  const agentWrites = transcript.calls
    .filter((call) => (WRITE_TOOLS as readonly string[]).includes(call.name))
    .map((call) => (call.arguments === null ? `${call.name} null` : callKey(call.name, call.arguments)));
  const solverWrites = solved.calls.filter(isWrite);
  const writes = canonicalJson(agentWrites) === canonicalJson(solverWrites) ? 1 : 0;
  const info = solved.solution.required.every((phrasings) => mentions(transcript.reply, phrasings)) ? 1 : 0;
  return { status: "scored", value: writes * info, components: { calls: 1, writes, info } };
}

/** `scoreConsistency` as an `@envace/rewards` `RewardFunction` (it reads the rollout alone). */
export const consistentReward: RewardFunction = (trajectory, task) => {
  try {
    return Promise.resolve(scoreConsistency(task, trajectory));
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
};
