import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { presetPath } from "../commands/train.js";
import { loadConfig } from "../config/load.js";
import { BASE_FILES, BaseCheckpointError, embeddedCheckpointsDirectory, resolveInitFrom, verifyBase } from "./base-checkpoint.js";
import { TinyPolicyModel } from "./tiny-model.js";

const shipped = join(embeddedCheckpointsDirectory(), "base");
const manifest = JSON.parse(readFileSync(join(shipped, "manifest.json"), "utf8")) as { config: unknown; files: Record<string, string> };

function copyOfBase(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "envace-base-")), "base");
  cpSync(shipped, dir, { recursive: true });
  return dir;
}

describe("the shipped base checkpoint", () => {
  it("holds exactly the files its manifest hashes", () => {
    for (const name of BASE_FILES) {
      const digest = createHash("sha256")
        .update(readFileSync(join(shipped, name)))
        .digest("hex");
      expect(manifest.files[name], name).toBe(digest);
    }
    expect(() => verifyBase(shipped)).not.toThrow();
  });

  it("was built from presets/base.yaml as it stands (the preset and the weights cannot drift apart)", () => {
    expect(JSON.parse(JSON.stringify(loadConfig(presetPath("base"))))).toEqual(manifest.config);
  });

  it("loads through the same code as any checkpoint, with the shape its config names", async () => {
    const model = await TinyPolicyModel.load(resolveInitFrom("embedded:base"), "tfjs", 7);
    try {
      // 720 tokens × 96 (tied embeddings) + 3 layers × (4·96² attention + 3·96·256 MLP + 2·96 norms) + 96.
      expect(model.backend.parameterCount).toBe(720 * 96 + 3 * (4 * 96 * 96 + 3 * 96 * 256 + 2 * 96) + 96);
      expect(model.contextTokens).toBe(512);
      // Weights only: the optimizer starts fresh.
      expect(model.backend.optimizerStep).toBe(0);
    } finally {
      model.close();
    }
  });

  it("refuses a copy whose weights were altered, naming the file", () => {
    const dir = copyOfBase();
    const file = join(dir, "model.safetensors");
    const bytes = readFileSync(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 1, bytes.length - 1);
    writeFileSync(file, bytes);
    expect(() => verifyBase(dir)).toThrow(BaseCheckpointError);
    expect(() => verifyBase(dir)).toThrow(`${file}: SHA-256 differs`);
  });

  it("refuses an unknown embedded name and a config whose model shape is not the checkpoint's", () => {
    expect(() => resolveInitFrom("embedded:nope")).toThrow(/init_from: no shipped checkpoint embedded:nope/);
    const { model } = loadConfig(presetPath("default"));
    if (model.type !== "tiny") throw new Error("the default preset trains the tiny model");
    expect(resolveInitFrom("embedded:base", model)).toBe(shipped);
    expect(() => resolveInitFrom("embedded:base", { ...model, hidden_size: 128 })).toThrow(/model\.hidden_size is 128, the checkpoint's 96/);
  });
});
