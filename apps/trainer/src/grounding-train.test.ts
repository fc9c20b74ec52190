// Hybrid grounding in whole (micro) runs: off is EnvACE to the bit, on keeps its real-call caps.
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config/load.js";
import type { TrainConfig } from "./config/schema.js";
import { readMetrics, type MetricsRecord } from "./run/metrics-log.js";
import { train } from "./train.js";

const quiet = (): void => undefined;
const runDir = (): string => join(mkdtempSync(join(tmpdir(), "envace-grounding-")), "run");
/**
 * A few steps from the shipped base (which makes tool calls, where a micro model warm-started for a
 * test makes almost none), without evaluations or kept rollouts.
 */
function config(extra: string, steps = 2): TrainConfig {
  const yaml = `
seed: 3
data: { source: builtin, train_tasks: 12, test_tasks: 4 }
rollout: { keep: 0, tasks_per_step: 2, rollouts_per_task: 2, max_turns: 3, concurrency: 8 }
trainer: { total_steps: ${steps}, save_every: 1 }
eval: { every_steps: 0, rehearsal: [none] }
${extra}
`;
  return parseConfig(yaml, "g.yaml");
}

/** Every record but the clock's fields. */
function records(dir: string): MetricsRecord[] {
  return readMetrics(join(dir, "metrics.jsonl")).records.map(
    (r) => Object.fromEntries(Object.entries(r).filter(([key]) => !/(_s|seconds)$/.test(key))) as MetricsRecord,
  );
}

/** Every file of a checkpoint folder, by name. */
function checkpoint(dir: string): Record<string, Buffer> {
  return Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f !== "complete")
      .map((f) => [f, readFileSync(join(dir, f))]),
  );
}

describe("training with grounding", () => {
  it("at fraction 0 is EnvACE to the bit: the same rollouts, rewards, advantages, update and weights", async () => {
    const plain = runDir();
    const zero = runDir();
    await train(config(""), plain, { log: quiet });
    await train(config("grounding: { fraction: 0, select: uncertain, use: [metric, target, reward], target_coef: 3, reward_coef: 2 }"), zero, { log: quiet });
    const steps = records(plain);
    expect(steps.filter((r) => r.kind === "train")).toHaveLength(2);
    // Not vacuous: the rollouts made (rehearsed) calls that grounding could have taken.
    expect(steps.filter((r) => r.kind === "train").every((r) => (r.rows as { rehearse?: number }).rehearse! > 0)).toBe(true);
    expect(records(zero)).toEqual(steps);
    const last = (dir: string) => checkpoint(join(dir, "checkpoints", "step-000002", "policy"));
    expect(Object.keys(last(plain)).length).toBeGreaterThan(0);
    expect(last(zero)).toEqual(last(plain));
  }, 240_000);

  it("on, counts every real call in env_calls, never passes its per-step and per-run caps, and trains the grounded targets", async () => {
    const dir = runDir();
    await train(config("grounding: { fraction: 0.5, use: [metric, target, reward], max_calls: { per_step: 3, per_run: 5 } }", 3), dir, { log: quiet });
    const steps = records(dir).filter((r) => r.kind === "train");
    expect(steps.map((r) => r.step)).toEqual([1, 2, 3]);
    let run = 0;
    for (const r of steps) {
      const g = r.grounding as Record<string, number | null>;
      // Self-unfolded rollouts make no real call: every one of the step's is grounding's.
      expect(r.env_calls).toBe(g.calls);
      expect(g.calls!).toBeLessThanOrEqual(3);
      run += g.calls!;
      expect(g.calls_run).toBe(run);
      expect(g.compared! + g.diverged! + g.exceptions!).toBe(g.selected! - g.over_budget!);
      expect(Object.keys(g)).toEqual(expect.arrayContaining(["exact", "keys", "status", "failure_recall", "fraction", "select"]));
    }
    expect(run).toBeGreaterThan(0);
    expect(run).toBeLessThanOrEqual(5);
    // The run's cap reached, the last step grounds nothing.
    if (run === 5) expect((steps[2]!.grounding as { calls: number }).calls).toBe(0);
    // Where a call was compared, the supervised term trained on it.
    const compared = steps.filter((r) => (r.grounding as { compared: number }).compared > 0);
    expect(compared.length).toBeGreaterThan(0);
    for (const r of compared) expect((r.grounding as { target_tokens: number }).target_tokens).toBeGreaterThan(0);
  }, 240_000);
});
