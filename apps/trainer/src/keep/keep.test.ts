import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScoredRow } from "@envace/grpo";
import { RecordError, Trajectory, type Generation, type RewardVerdict } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { keptEvalRecord, keptTaskIds, keptTrainRecords } from "./collect.js";
import { KeptRollouts, keptPath, readKept } from "./log.js";
import { slimTrajectory } from "./record.js";

const generation = (role: "act" | "rehearse", text: string, output: number[]): Generation => ({
  role,
  text,
  promptTokens: [1, 2, 3, 4, 5, 6],
  outputTokens: output,
  logprobs: output.map(() => -0.5),
  finishReason: "stop",
});

/** A rollout of `task`: one call to `buy`, answered by the policy itself, then a reply. */
function trajectory(id: string, taskId: string, rollout: number): Trajectory {
  return Trajectory.parse({
    id,
    taskId,
    rollout,
    context: [{ role: "user", content: "buy one apple" }],
    steps: [
      {
        type: "act",
        generation: generation("act", '<tool_call>{"name":"buy"}</tool_call>', [7, 8, 9]),
        message: { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "buy", arguments: "{}" } }] },
        outcomes: [
          {
            provenance: "rehearsed",
            call: { id: "c1", name: "buy", arguments: {} },
            result: { status: "ok", callId: "c1", name: "buy", content: { bought: 1 } },
            generation: generation("rehearse", '{"bought":1}', [10, 11]),
          },
        ],
      },
      { type: "act", generation: generation("act", "done", [12]), message: { role: "assistant", content: "done" }, outcomes: [] },
    ],
    termination: { reason: "agent_stop" },
  });
}

const row = (trajectoryId: string, role: "act" | "rehearse", advantage: number): ScoredRow => ({
  row: { taskId: "t", trajectoryId, rollout: 0, index: 0, role, promptTokens: [], outputTokens: [], logprobs: null, invalid: false },
  reward: 0,
  score: 0,
  advantage,
  groupRole: role,
});

describe("slimTrajectory", () => {
  it("drops prompt token ids and log-probabilities, keeps output tokens, and still validates as a protocol Trajectory", () => {
    const slim = slimTrajectory(trajectory("a", "t1", 0), { status: "scored", value: 1 });
    const act = slim.steps[0]!;
    if (act.type !== "act" || act.outcomes[0]!.provenance !== "rehearsed") throw new Error("unexpected shape");
    expect(act.generation.promptTokens).toEqual([]);
    expect(act.generation.logprobs).toBeNull();
    expect(act.generation.outputTokens).toEqual([7, 8, 9]);
    expect(act.outcomes[0]!.generation!.outputTokens).toEqual([10, 11]);
    expect(act.outcomes[0]!.generation!.promptTokens).toEqual([]);
    expect(slim.reward).toEqual({ status: "scored", value: 1 });
    expect(Trajectory.parse(JSON.parse(JSON.stringify(slim)))).toEqual(slim);
  });
});

describe("keptTrainRecords", () => {
  const trajectories = [trajectory("a0", "t1", 0), trajectory("a1", "t1", 1), trajectory("b0", "t2", 0), trajectory("b1", "t2", 1), trajectory("c0", "t3", 0)];
  const verdicts = new Map<string, RewardVerdict>([
    ["a0", { status: "scored", value: 1 }],
    ["a1", { status: "scored", value: 0 }],
    ["b0", { status: "masked", reason: "judge unreachable" }],
    ["b1", { status: "scored", value: 0 }],
    ["c0", { status: "scored", value: 1 }],
  ]);
  const batch = {
    // a0 has two act rows (advantages 1 and 0.5: mean 0.75) and one rehearse row.
    rows: [row("a0", "act", 1), row("a0", "act", 0.5), row("a0", "rehearse", 0.25), row("a1", "act", -1), row("c0", "act", 2)],
    // b1's group was all-equal once b0 was masked: its rows were dropped with advantage 0.
    dropped: [row("b1", "act", 0)],
    masked: [{ taskId: "t2", trajectoryId: "b0", rollout: 0, reason: "judge unreachable", rows: 2 }],
  };

  it("keeps the first groups in rollout order, each rollout with its verdict, mean advantage per role and mask reason", () => {
    expect(keptTaskIds(trajectories, 2)).toEqual(["t1", "t2"]);
    const records = keptTrainRecords({ step: 3, trajectories, verdicts, batch, groups: 2, memories: new Map([["a1", "plan: buy"]]) });
    expect(records.map((r) => [r.trajectory.id, r.group, r.advantage, r.masked, r.memory, r.trajectory.reward])).toEqual([
      ["a0", 0, { act: 0.75, rehearse: 0.25 }, null, null, { status: "scored", value: 1 }],
      ["a1", 0, { act: -1, rehearse: null }, null, "plan: buy", { status: "scored", value: 0 }],
      ["b0", 1, { act: null, rehearse: null }, "judge unreachable", null, { status: "masked", reason: "judge unreachable" }],
      ["b1", 1, { act: 0, rehearse: null }, null, null, { status: "scored", value: 0 }],
    ]);
    expect(records.every((r) => r.step === 3)).toBe(true);
  });

  it("keeps nothing with keep 0", () => {
    expect(keptTrainRecords({ step: 1, trajectories, verdicts, batch, groups: 0 })).toEqual([]);
  });
});

describe("keptEvalRecord", () => {
  it("carries a failed episode's error with no committed run", () => {
    const record = keptEvalRecord({ step: 2, setting: "none", taskId: "t9", success: false, verdict: null, error: "environment closed" });
    expect(record).toEqual({
      kind: "eval",
      step: 2,
      setting: "none",
      taskId: "t9",
      success: false,
      verdict: null,
      memory: null,
      attempts: [],
      committed: null,
      predictions: [],
      error: "environment closed",
    });
  });
});

describe("KeptRollouts", () => {
  const records = (step: number) =>
    keptTrainRecords({ step, trajectories: [trajectory(`s${step}`, "t1", 0)], verdicts: new Map(), batch: { rows: [], dropped: [], masked: [] }, groups: 1 });
  const lineBytes = (step: number) => Buffer.byteLength(JSON.stringify(records(step)[0])) + 1;

  it("appends until the cap, then stops with one log line naming the key", () => {
    const dir = mkdtempSync(join(tmpdir(), "envace-keep-"));
    const lines: string[] = [];
    // Room for steps 1 and 2, not 3 (each line is the same length: one-digit ids).
    const kept = KeptRollouts.open(dir, { maxBytes: lineBytes(1) + lineBytes(2) + 10, log: (l) => lines.push(l) });
    expect(kept.append(records(1))).toBe(1);
    expect(kept.append(records(2))).toBe(1);
    expect(kept.append(records(3))).toBe(0);
    expect(kept.append(records(4))).toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/rollout\.keep_max_mb.*train step 3/);
    expect(readKept(dir).train.map((r) => r.step)).toEqual([1, 2]);
    expect(kept.size).toBe(readFileSync(keptPath(dir, "train")).length);
  });

  it("reopened for a resumed run, drops the steps that will be redone and counts what is left against the cap", () => {
    const dir = mkdtempSync(join(tmpdir(), "envace-keep-"));
    const first = KeptRollouts.open(dir, { maxBytes: 1e9, log: () => undefined });
    for (const step of [1, 2, 3]) first.append(records(step));
    const again = KeptRollouts.open(dir, { maxBytes: 1e9, log: () => undefined, keep: (r) => r.step <= 2 });
    expect(again.size).toBe(lineBytes(1) + lineBytes(2));
    again.append(records(3));
    expect(readKept(dir).train.map((r) => r.step)).toEqual([1, 2, 3]);
  });

  it("reads back under the torn-line rule: a cut last line is dropped, a bad field is an error naming file, line and field", () => {
    const dir = mkdtempSync(join(tmpdir(), "envace-keep-"));
    KeptRollouts.open(dir, { maxBytes: 1e9, log: () => undefined }).append([...records(1), ...records(2)]);
    appendFileSync(keptPath(dir, "train"), '{"kind":"train","step":3,"traj');
    const torn: number[] = [];
    expect(readKept(dir, { onTornLine: (t) => torn.push(t.line) }).train).toHaveLength(2);
    expect(torn).toEqual([3]);

    const text = readFileSync(keptPath(dir, "train"), "utf8").split("\n");
    const bad = JSON.parse(text[1]!) as { trajectory: { rollout: unknown } };
    bad.trajectory.rollout = "first";
    writeFileSync(keptPath(dir, "train"), `${text[0]}\n${JSON.stringify(bad)}\n`);
    expect(() => readKept(dir)).toThrow(RecordError);
    expect(() => readKept(dir)).toThrow(/train\.jsonl:2: trajectory\.rollout/);
  });

  it("reads a run without kept rollouts as none", () => {
    const dir = mkdtempSync(join(tmpdir(), "envace-keep-"));
    expect(readKept(dir)).toEqual({ train: [], eval: [] });
    expect(existsSync(join(dir, "rollouts"))).toBe(false);
  });
});
