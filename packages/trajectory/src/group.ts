import { setMaxListeners } from "node:events";
import { AbortFlag, type ConcurrencyLimit } from "@envace/concurrency";
import type { Environment, Trajectory } from "@envace/protocol";
import type { RehearsalEnvironment } from "./rehearsal-environment.js";
import { unfoldRollout, type SharedRolloutOptions } from "./unfold.js";
import type { UserTurnSource } from "./user-turns.js";

// The global cap `unfoldGroup` takes: one limit shared by every group of a batch.

type EnvironmentLike = Environment | RehearsalEnvironment;

export interface UnfoldGroupOptions extends SharedRolloutOptions {
  /** G: rollouts of the task. */
  size: number;
  /** The index of the group's first rollout (default 0): a group unfolded in parts numbers them on. */
  firstRollout?: number;
  /**
   * The environment of each rollout. A real environment holds episode state, so give a factory
   * that makes one per rollout; a rehearsal environment may be shared.
   */
  environment: EnvironmentLike | ((rollout: number) => EnvironmentLike);
  /**
   * The user's own side of each rollout in a dual-control task (`UnfoldOptions.userEnvironment`).
   * A real side holds episode state: give a factory, which gets the rollout's environment so it
   * can answer with that environment's own user side (e.g. `environment.user`), or with nothing.
   * A rehearsal one may be shared by the group, though not with `environment`: each is reset
   * with its own side's tools.
   */
  userEnvironment?: EnvironmentLike | ((rollout: number, environment: EnvironmentLike) => EnvironmentLike | undefined);
  /** User turns of each rollout (a factory when the source holds state). */
  users?: UserTurnSource | ((rollout: number) => UserTurnSource);
  /** The global cap; without one the group's rollouts all run at once. */
  limit?: ConcurrencyLimit;
  signal?: AbortSignal;
}

/**
 * G rollouts of one task, run concurrently under `limit`. The result is in rollout order. If one
 * rollout fails, the others are cancelled and, once all have ended, the group rejects with that failure.
 */
export async function unfoldGroup(options: UnfoldGroupOptions): Promise<Trajectory[]> {
  const { size, environment, userEnvironment, users, limit, signal } = options;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`group size must be a positive integer, got ${size}`);
  const controller = new AbortController();
  // Every rollout's requests listen to this signal (an HTTP client adds a listener per request),
  // so its listener count grows with G by design; Node's leak warning past 10 would be a false alarm.
  setMaxListeners(0, controller.signal);
  const cancel = (): void => {
    controller.abort(signal?.reason);
  };
  signal?.addEventListener("abort", cancel, { once: true });
  if (signal?.aborted === true) cancel();

  // One flag for the whole group, so the rollouts add no listener each.
  const abort = new AbortFlag(controller.signal);

  const one = (rollout: number): Promise<Trajectory> => {
    const run = (): Promise<Trajectory> => {
      const agentSide = typeof environment === "function" ? environment(rollout) : environment;
      const userSide = typeof userEnvironment === "function" ? userEnvironment(rollout, agentSide) : userEnvironment;
      return unfoldRollout(options, {
        environment: agentSide,
        ...(userSide === undefined ? {} : { userEnvironment: userSide }),
        users: typeof users === "function" ? users(rollout) : users,
        rollout,
        signal: controller.signal,
        abort,
      });
    };
    return limit === undefined ? run() : limit.run(run, controller.signal);
  };

  try {
    // Every rollout settles before the group answers, so a failed group has released every
    // rollout's environment (each closes its own) by the time it rejects.
    let failure: { error: unknown } | undefined;
    const settled = await Promise.allSettled(
      Array.from({ length: size }, (_, index) =>
        one((options.firstRollout ?? 0) + index).catch((error: unknown) => {
          if (!controller.signal.aborted) controller.abort(error);
          failure ??= { error };
          throw error;
        }),
      ),
    );
    if (failure !== undefined) throw failure.error;
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<Trajectory>).value);
  } finally {
    signal?.removeEventListener("abort", cancel);
    abort.dispose();
  }
}
