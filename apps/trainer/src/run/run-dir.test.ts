import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RunDirectory, stepName } from "./run-dir.js";

const root = mkdtempSync(join(tmpdir(), "envace-run-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = { seed: 1, steps: 3 };

function writeStep(step: number): (dir: string) => Promise<void> {
  return (dir) => {
    writeFileSync(join(dir, "weights.txt"), `step ${step}\n`);
    return Promise.resolve();
  };
}

describe("RunDirectory", () => {
  it("writes its config once and refuses another config, leaving the first", () => {
    const path = join(root, "config");
    RunDirectory.open(path, config);
    expect(readFileSync(join(path, "config.json"), "utf8")).toBe('{\n  "seed": 1,\n  "steps": 3\n}\n');
    expect(() => RunDirectory.open(path, { ...config, seed: 2 })).toThrow(/holds a run with a different config/);
    expect(readFileSync(join(path, "config.json"), "utf8")).toBe('{\n  "seed": 1,\n  "steps": 3\n}\n');
    expect(readdirSync(path).sort()).toEqual(["checkpoints", "config.json"]);
  });

  it("replaces a checkpoint of the same name whole, leaving nothing beside it", async () => {
    const run = RunDirectory.open(join(root, "replace"), config);
    await run.saveCheckpoint("sft", writeStep(0));
    await run.saveCheckpoint("sft", writeStep(1));
    expect(readFileSync(join(run.checkpointPath("sft"), "weights.txt"), "utf8")).toBe("step 1\n");
    expect(readdirSync(run.checkpointPath("sft")).sort()).toEqual(["complete", "weights.txt"]);
    expect(readdirSync(join(run.path, "checkpoints"))).toEqual(["sft"]);
  });

  it("resumes from a checkpoint whose replacement a crash cut off between its renames, and drops a half-written one", async () => {
    const path = join(root, "crashed");
    const run = RunDirectory.open(path, config);
    await run.saveCheckpoint("sft", writeStep(0));
    await run.saveCheckpoint(stepName(1), writeStep(1));
    await run.saveCheckpoint(stepName(2), writeStep(2));
    // A kill after step 2's folder was moved aside for its replacement, and one while step 3 was being filled.
    const checkpoints = join(path, "checkpoints");
    renameSync(join(checkpoints, stepName(2)), join(checkpoints, `.${stepName(2)}.old`));
    mkdirSync(join(checkpoints, `.${stepName(3)}.partial`));
    writeFileSync(join(checkpoints, `.${stepName(3)}.partial`, "weights.txt"), "step 3, cut short");
    const resumed = RunDirectory.open(path, config);
    expect(resumed.resumeStep).toBe(2);
    expect(readFileSync(join(resumed.checkpointPath(stepName(2)), "weights.txt"), "utf8")).toBe("step 2\n");
    expect(readdirSync(checkpoints).sort()).toEqual(["sft", stepName(1), stepName(2)]);
    expect(existsSync(join(checkpoints, stepName(3)))).toBe(false);
  });
});
