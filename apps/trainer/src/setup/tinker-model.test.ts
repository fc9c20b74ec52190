import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { folderCheckpoints, startTinkerServer, TinkerReductionError, type TinkerServer } from "@envace/tinker";
import { InProcessBackend } from "@envace/training";
import { parseConfig } from "../config/load.js";
import { readMetrics } from "../run/metrics-log.js";
import { MICRO_CONFIG } from "../testing/micro.js";
import { train } from "../train.js";
import { builtinDomain } from "./domain.js";
import { TinyPolicyModel } from "./tiny-model.js";

// A Hugging Face-style model folder (the tiny model with its tokenizer and chat template) served
// by this project's own Tinker server on loopback: the trainer drives it as it would hosted Tinker.
let server: TinkerServer;
let modelFolder: string;
const root = mkdtempSync(join(tmpdir(), "envace-tinker-"));

beforeAll(async () => {
  const config = parseConfig(MICRO_CONFIG, "micro.yaml");
  const model = await TinyPolicyModel.create(config.model as Extract<typeof config.model, { type: "tiny" }>, builtinDomain(config).corpus(), {
    seed: 1,
    rolloutEngine: "tfjs",
    listTools: false,
  });
  modelFolder = join(root, "tiny-hf");
  await model.save(modelFolder);
  model.close();
  server = await startTinkerServer({
    createBackend: ({ seed }) => InProcessBackend.load(modelFolder, { optimizer: false, ...(seed === undefined ? {} : { seed }) }),
    checkpoints: folderCheckpoints(join(root, "server-checkpoints"), {
      save: (backend, dir) => {
        if (!(backend instanceof InProcessBackend)) throw new Error("this server only hosts in-process models");
        return backend.saveCheckpoint(dir);
      },
      load: (dir, { optimizer }) => InProcessBackend.load(dir, { optimizer }),
    }),
  });
}, 60_000);

afterAll(async () => {
  await server.close();
});

describe("training through a Tinker server", () => {
  it("warm-starts, trains and checkpoints a model that lives on the server, then resumes from its saved state", async () => {
    const text = `${MICRO_CONFIG.replace(/^model: .*$/m, "")}
model: { type: hf, path: ${JSON.stringify(modelFolder)}, context_tokens: 512 }
backend: { type: tinker, base_url: ${JSON.stringify(server.url)}, base_model: tiny, lora_rank: 0 }
`.replace("every_steps: 2", "every_steps: 0");
    const config = parseConfig(text, "tinker.yaml");
    const dir = join(root, "run");
    await train(config, dir, { log: () => undefined });
    const steps = readMetrics(join(dir, "metrics.jsonl")).records.filter((r) => r.kind === "train");
    expect(steps.map((r) => r.step)).toEqual([1, 2]);
    expect(steps.every((r) => typeof r.loss === "number" && Number.isFinite(r.loss))).toBe(true);

    // As if killed before step 2's checkpoint: resuming loads step 1's weights back onto the server.
    rmSync(join(dir, "checkpoints", "step-000002"), { recursive: true });
    const lines: string[] = [];
    await train(config, dir, { log: (line) => lines.push(line) });
    expect(lines).toContain(`resuming ${dir} after step 1`);
    const redone = readMetrics(join(dir, "metrics.jsonl")).records.filter((r) => r.kind === "train");
    expect(redone.map((r) => r.step)).toEqual([1, 2]);
    expect(redone[0]).toEqual(steps[0]);
    expect(JSON.parse(readFileSync(join(dir, "checkpoints", "step-000002", "policy", "tinker.json"), "utf8"))).toMatchObject({ base_model: "tiny" });
  }, 180_000);

  it("refuses a reduction the server contradicts before it creates the model or writes the run directory", async () => {
    const text = `${MICRO_CONFIG.replace(/^model: .*$/m, "")}
model: { type: hf, path: ${JSON.stringify(modelFolder)}, context_tokens: 512 }
backend: { type: tinker, base_url: ${JSON.stringify(server.url)}, base_model: tiny, lora_rank: 0, reduction: datum-token-mean }
`;
    const dir = join(root, "refused");
    const refusal = train(parseConfig(text, "tinker.yaml"), dir, { log: () => undefined });
    await expect(refusal).rejects.toThrow(TinkerReductionError);
    await expect(refusal).rejects.toThrow(`reduction "datum-token-mean" is configured, but ${server.url} reduces losses by "sum"`);
    expect(existsSync(dir)).toBe(false);
  }, 60_000);
});
