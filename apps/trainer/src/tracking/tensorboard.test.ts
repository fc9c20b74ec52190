import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../config/load.js";
import { readMetrics } from "../run/metrics-log.js";
import { MICRO_CONFIG } from "../testing/micro.js";
import { train } from "../train.js";
import { crc32c } from "./tfevents.js";
import { TensorBoardTracker } from "./tracking.js";

describe("crc32c", () => {
  it("gives the published check value of CRC-32C (Castagnoli) for 123456789", () => {
    expect(crc32c(Buffer.from("123456789"))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });
});

/**
 * A Python with the `tensorboard` package: `ENVACE_TENSORBOARD_PYTHON`, else `python3` if it has
 * it. (`python3 -m venv .venv-tensorboard && .venv-tensorboard/bin/pip install tensorboard`, then
 * `ENVACE_TENSORBOARD_PYTHON=$PWD/.venv-tensorboard/bin/python`.)
 */
function tensorboardPython(): string | undefined {
  for (const python of [process.env.ENVACE_TENSORBOARD_PYTHON, "python3"]) {
    if (python === undefined || python === "") continue;
    if (spawnSync(python, ["-c", "import tensorboard"], { stdio: "ignore" }).status === 0) return python;
  }
  return undefined;
}

// TensorBoard's own reader: every scalar of every event file under `dir`, by tag, as [step, value].
const READER = `
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
acc.Reload()
print(json.dumps({tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}))
`;

function readBack(python: string, dir: string): Record<string, [number, number][]> {
  return JSON.parse(execFileSync(python, ["-c", READER, dir], { encoding: "utf8" })) as Record<string, [number, number][]>;
}

const python = tensorboardPython();
if (python === undefined)
  console.warn("TensorBoard reader test skipped: no Python with the tensorboard package (set ENVACE_TENSORBOARD_PYTHON to one; see apps/trainer/README.md)");

describe.skipIf(python === undefined)("TensorBoard event files, read back by TensorBoard's own reader", () => {
  it("holds each record's numbers under <kind>/<path> tags, an evaluation's under its setting, at the record's step", () => {
    const dir = mkdtempSync(join(tmpdir(), "envace-tb-"));
    const tracker = new TensorBoardTracker(dir);
    tracker.record({ kind: "sft", step: 1, stage: "sft", loss: 2.5 });
    tracker.record({ kind: "train", step: 3, reward: { act: 0.5, rehearse: -0.25 }, loss: 6e-9, env_calls: 0, terminations: { agent_stop: 4 } });
    tracker.record({ kind: "eval", step: 3, rehearsal: "parallel:2", success_rate: 0.75, success_ci95: [0.3, 0.95], outcomes: "1101" });
    // simple_value is a 32-bit float: 6e-9, 0.3 and 0.95 come back as their nearest float32.
    expect(readBack(python!, join(dir, "tensorboard"))).toEqual({
      "sft/loss": [[1, 2.5]],
      "train/reward/act": [[3, 0.5]],
      "train/reward/rehearse": [[3, -0.25]],
      "train/loss": [[3, Math.fround(6e-9)]],
      "train/env_calls": [[3, 0]],
      "train/terminations/agent_stop": [[3, 4]],
      "eval/parallel:2/success_rate": [[3, 0.75]],
      "eval/parallel:2/success_ci95/0": [[3, Math.fround(0.3)]],
      "eval/parallel:2/success_ci95/1": [[3, Math.fround(0.95)]],
    });
  });

  it("a short run with tracking: [tensorboard] gives back every number of metrics.jsonl, at its step", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "envace-tb-run-")), "run");
    await train(parseConfig(`${MICRO_CONFIG}\ntracking: [tensorboard]\n`, "tb.yaml"), dir, { log: () => undefined });
    expect(readdirSync(join(dir, "tensorboard")).filter((f) => f.startsWith("events.out.tfevents."))).toHaveLength(1);
    // metrics.jsonl's numbers, walked here without the tracker's code.
    const expected: Record<string, [number, number][]> = {};
    const add = (tag: string, step: number, value: unknown): void => {
      if (typeof value === "number") (expected[tag] ??= []).push([step, Math.fround(value)]);
      else if (typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) add(`${tag}/${k}`, step, v);
    };
    for (const record of readMetrics(join(dir, "metrics.jsonl")).records) {
      const { kind, step, ...rest } = record;
      for (const [key, value] of Object.entries(rest)) add(`${kind === "eval" ? `eval/${String(record.rehearsal)}` : kind}/${key}`, step, value);
    }
    const read = readBack(python!, join(dir, "tensorboard"));
    expect(Object.keys(read).sort()).toEqual(Object.keys(expected).sort());
    for (const tag of Object.keys(expected)) expect(read[tag], tag).toEqual(expected[tag]);
    expect(read["train/reward/mean"]!.map(([step]) => step)).toEqual([1, 2]);
  }, 120_000);
});
