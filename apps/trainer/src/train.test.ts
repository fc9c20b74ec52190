import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config/load.js";
import { readKept } from "./keep/log.js";
import { readMetrics } from "./run/metrics-log.js";
import { MICRO_CONFIG } from "./testing/micro.js";
import { train } from "./train.js";

function runDir(): string {
  return join(mkdtempSync(join(tmpdir(), "envace-train-")), "run");
}

const quiet = (): void => undefined;

describe("train", () => {
  it("in envace mode makes no real-environment calls, and logs every step once", async () => {
    const dir = runDir();
    const config = parseConfig(MICRO_CONFIG, "micro.yaml");
    const result = await train(config, dir, { log: quiet });
    const { records } = readMetrics(join(dir, "metrics.jsonl"));
    const steps = records.filter((r) => r.kind === "train");
    expect(steps.map((r) => r.step)).toEqual([1, 2]);
    for (const record of steps) expect(record.env_calls).toBe(0);
    expect(records.filter((r) => r.kind === "eval").map((r) => r.step)).toEqual([0, 2]);
    expect(result.evaluations).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, "config.json"), "utf8"))).toEqual(config);

    // Kept rollouts (default keep 2 ≥ the step's groups): every rollout of each step, every task
    // of each evaluation, all valid against the protocol's schemas (readKept validates).
    const kept = readKept(dir);
    expect(kept.train.map((r) => r.step)).toEqual([1, 1, 1, 1, 2, 2, 2, 2]);
    for (const r of kept.train) {
      // Self-unfolded: every tool answer imagined, none real.
      const provenances = r.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes.map((o) => o.provenance) : []));
      expect(provenances.every((p) => p === "rehearsed")).toBe(true);
      expect(r.trajectory.reward).toBeDefined();
    }
    // Within a group, a rollout scored above the group's mean has a positive Act advantage.
    for (const step of [1, 2]) {
      const ofStep = kept.train.filter((r) => r.step === step);
      for (const group of [...new Set(ofStep.map((r) => r.group))].map((g) => ofStep.filter((r) => r.group === g))) {
        const values = group.map((r) => (r.trajectory.reward?.status === "scored" ? r.trajectory.reward.value : Number.NaN));
        const mean = values.reduce((a, b) => a + b, 0) / values.length;
        group.forEach((r, i) => {
          if (r.advantage.act !== null && Math.abs(values[i]! - mean) > 1e-9) expect(Math.sign(r.advantage.act)).toBe(Math.sign(values[i]! - mean));
        });
      }
    }
    expect(kept.eval.map((r) => [r.step, r.setting])).toEqual([
      ...Array<[number, string]>(4).fill([0, "none"]),
      ...Array<[number, string]>(4).fill([2, "none"]),
    ]);
    const outcomes = records.filter((r) => r.kind === "eval").map((r) => r.outcomes);
    expect([kept.eval.slice(0, 4), kept.eval.slice(4)].map((e) => e.map((r) => (r.success ? "1" : "0")).join(""))).toEqual(outcomes);
    for (const r of kept.eval) {
      // One prediction per real answer of the committed run.
      const grounded = r.committed!.steps.flatMap((s) => (s.type === "act" ? s.outcomes.filter((o) => o.provenance === "grounded") : []));
      expect(r.predictions.map((p) => p.callId)).toEqual(grounded.map((o) => o.call.id));
    }
  }, 120_000);

  it("is reproducible: the same config gives the same rollouts, losses and evaluations", async () => {
    // On onnxruntime, whose sampler draws from the clock unless a request carries a seed.
    const config = parseConfig(MICRO_CONFIG.replace("engine: tfjs", "engine: onnx"), "micro.yaml");
    const runOnce = async (): Promise<unknown[]> => {
      const dir = runDir();
      await train(config, dir, { log: quiet });
      // Everything but the clock.
      return readMetrics(join(dir, "metrics.jsonl")).records.map((r) => Object.fromEntries(Object.entries(r).filter(([key]) => !/(_s|seconds)$/.test(key))));
    };
    const first = await runOnce();
    expect(first.filter((r) => (r as { kind: string }).kind === "train")).toHaveLength(2);
    expect(await runOnce()).toEqual(first);
  }, 180_000);

  it("runs a curriculum stage on its roles before the main SFT stage, and with total_steps 0 the warm start alone", async () => {
    const dir = runDir();
    const config = parseConfig(
      MICRO_CONFIG.replace("total_steps: 2", "total_steps: 0")
        .replace("sft: {", "sft: { argument_weight: 5, curriculum: { roles: [act], epochs: 2, lr: 0.01 },")
        .replace("rollout: {", "rollout: { keep: 0,"),
      "c.yaml",
    );
    const result = await train(config, dir, { log: quiet });
    const { records } = readMetrics(join(dir, "metrics.jsonl"));
    const sft = records.filter((r) => r.kind === "sft");
    // 12 tasks: 12 Act data (one per dialogue) fit one batch of 32, twice; then every role's
    // data (12 Act and 2–5 Rehearse a dialogue: 36–72) in two or three batches, once.
    const stages = sft.map((r) => r.stage);
    expect(stages.slice(0, 3)).toEqual(["sft curriculum", "sft curriculum", "sft"]);
    expect(stages.length === 4 || stages.length === 5).toBe(true);
    expect(stages.slice(3).every((s) => s === "sft")).toBe(true);
    expect(sft.map((r) => r.step)).toEqual(stages.map((_, i) => i + 1));
    expect(records.filter((r) => r.kind === "train")).toEqual([]);
    expect(records.filter((r) => r.kind === "eval").map((r) => r.step)).toEqual([0]);
    expect(result.evaluations).toHaveLength(1);
    expect(readFileSync(join(dir, "checkpoints", "sft", "complete"), "utf8")).toBeDefined();
    // keep 0: no rollouts folder at all.
    expect(existsSync(join(dir, "rollouts"))).toBe(false);
  }, 120_000);

  it("with kl_coef > 0 scores a frozen reference: the KL to it starts at exactly 0, then grows; the sampler's drift is logged apart", async () => {
    const dir = runDir();
    const config = parseConfig(
      MICRO_CONFIG.replace("actor: { lr: 0.0001 }", "actor: { kl_coef: 0.001, lr: 0.01 }").replace("total_steps: 2", "total_steps: 3"),
      "kl.yaml",
    );
    await train(config, dir, { log: quiet });
    const steps = readMetrics(join(dir, "metrics.jsonl")).records.filter((r) => r.kind === "train");
    expect(steps.map((r) => r.step)).toEqual([1, 2, 3]);
    // Step 1 scores the warm start itself: learner = reference, so k3 = exp(0) − 0 − 1 = 0.
    expect(steps[0]!.ref_kl).toBe(0);
    expect(steps[2]!.ref_kl as number).toBeGreaterThan(0);
    for (const r of steps) expect(typeof r.sampler_kl).toBe("number");
  }, 180_000);

  it("at rollout temperature 0.7 the policy ratio starts every step at 1 (the learner scores the tempered distribution)", async () => {
    const dir = runDir();
    const config = parseConfig(MICRO_CONFIG.replace("rollout: {", "rollout: { temperature: 0.7,"), "t.yaml");
    await train(config, dir, { log: quiet });
    const steps = readMetrics(join(dir, "metrics.jsonl")).records.filter((r) => r.kind === "train");
    expect(steps).toHaveLength(2);
    for (const r of steps) {
      const ratio = r.ratio as { min: number; max: number };
      expect(Math.abs(ratio.min - 1)).toBeLessThan(1e-4);
      expect(Math.abs(ratio.max - 1)).toBeLessThan(1e-4);
    }
  }, 120_000);

  it("starts a second mode from the first run's warm start with init_from", async () => {
    const first = runDir();
    await train(parseConfig(MICRO_CONFIG, "micro.yaml"), first, { log: quiet });
    const warm = join(first, "checkpoints", "sft");
    const second = runDir();
    const config = parseConfig(
      `${MICRO_CONFIG}\nmode: grpo\nenvironment: simulator\n`.replace("init_from: null", `init_from: ${warm}`).replace("enabled: true", "enabled: false"),
      "b.yaml",
    );
    await train(config, second, { log: quiet });
    const weights = (dir: string): Buffer => readFileSync(join(dir, "checkpoints", "sft", "model.safetensors"));
    expect(weights(second).equals(weights(first))).toBe(true);
    const { records } = readMetrics(join(second, "metrics.jsonl"));
    expect(records.filter((r) => r.kind === "sft")).toEqual([]);
    expect(records.filter((r) => r.kind === "train").map((r) => r.env_calls)).toEqual([0, 0]);
  }, 180_000);
});
