import type { Environment, Task, ToolResult } from "@envace/protocol";
import { compareResults, type Agreement } from "@envace/rehearsal";
import type { RehearsedCall } from "./candidates.js";

/**
 * What grounding one rehearsed call found.
 *
 * - `compared`: the prefix replayed as the trajectory claims (each call's status as imagined), the
 *   call was executed, and its real answer compared with the imagined one.
 * - `diverged`: a call of the prefix answered for real with the other status than the trajectory
 *   says (an imagined id that does not exist for real: an error where the imagined answer was ok),
 *   so the real world is not in the state the call was made in; the call itself is not executed.
 *   A fidelity fact about the trajectory, never a crash.
 * - `exception`: the environment threw (at `reset`, in the prefix, or at the call).
 *
 * `calls`: the real calls made, a throwing one included.
 */
export type Grounding =
  | ({ kind: "compared"; real: ToolResult; calls: number } & Agreement)
  | { kind: "diverged"; at: number; tool: string; imagined: ToolResult["status"]; real: ToolResult; calls: number }
  | { kind: "exception"; stage: "reset" | "prefix" | "call"; at: number; message: string; calls: number };

/** Real calls a grounding makes at most: its prefix, then the call. */
export function groundingCost(candidate: Pick<RehearsedCall, "prefix">): number {
  return candidate.prefix.length + 1;
}

/**
 * Ground one rehearsed call: on a fresh environment for the task, replay the trajectory's
 * committed calls before it (the calls, not the imagined answers), then execute the call and
 * compare. The environment is closed on every path.
 */
export async function groundCall(candidate: RehearsedCall, task: Task, environment: Environment): Promise<Grounding> {
  let calls = 0;
  const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  try {
    try {
      await environment.reset(task);
    } catch (error) {
      return { kind: "exception", stage: "reset", at: 0, message: message(error), calls };
    }
    for (const [at, committed] of candidate.prefix.entries()) {
      const side = committed.side === "agent" ? environment : environment.user;
      if (side === undefined)
        return { kind: "exception", stage: "prefix", at, message: "the environment has no user side to replay a user's own call on", calls };
      let real: ToolResult;
      try {
        calls += 1;
        real = await side.call(committed.call);
      } catch (error) {
        return { kind: "exception", stage: "prefix", at, message: message(error), calls };
      }
      if (real.status !== committed.result.status) return { kind: "diverged", at, tool: committed.call.name, imagined: committed.result.status, real, calls };
    }
    let real: ToolResult;
    try {
      calls += 1;
      real = await environment.call(candidate.call);
    } catch (error) {
      return { kind: "exception", stage: "call", at: candidate.prefix.length, message: message(error), calls };
    }
    // An unreadable output predicted nothing: no agreement at all (as `probeFidelity` counts it).
    const agreement = candidate.answer === "unreadable" ? { exact: false, keys: false, status: false } : compareResults(candidate.rehearsed, real);
    return { kind: "compared", real, calls, ...agreement };
  } finally {
    await environment.close?.();
  }
}
