import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { InputError, parseRecord } from "@envace/protocol";
import { writeFileAtomically } from "@envace/records";
import type { TinyModelConfig } from "../config/schema.js";

/**
 * Base checkpoints: the warm start of the embedded default, built once by `envace pretrain` and
 * shipped in this package's `checkpoints/` folder, the way a pretrained model is downloaded once
 * rather than trained by every run. A config names one as `init_from: embedded:<name>`.
 */
const EMBEDDED = "embedded:";

/** The files a base checkpoint ships: the weights and what reading them needs, no optimizer state. */
export const BASE_FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"] as const;

export const BaseManifest = z.strictObject({
  format: z.literal(1),
  /** How it was built, to rebuild it. */
  command: z.string(),
  /** The whole train config of the build (defaults filled in). */
  config: z.record(z.string(), z.unknown()),
  /** Wall-clock seconds of the build on the machine that made it. */
  seconds: z.number().nonnegative(),
  /** SHA-256 of each shipped file. */
  files: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)),
});
export type BaseManifest = z.infer<typeof BaseManifest>;

export class BaseCheckpointError extends InputError {
  override readonly code: string = "base-checkpoint";
  override readonly name = "BaseCheckpointError";
}

/** The folder of shipped base checkpoints (next to src/ and dist/). */
export function embeddedCheckpointsDirectory(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "../../checkpoints");
}

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** Read `dir/manifest.json` and check every shipped file against its recorded hash. */
export function verifyBase(dir: string): BaseManifest {
  const file = join(dir, "manifest.json");
  if (!existsSync(file)) throw new BaseCheckpointError(`${dir}: not a base checkpoint (no manifest.json)`);
  const manifest = parseRecord(BaseManifest, JSON.parse(readFileSync(file, "utf8")) as unknown, { file });
  for (const name of BASE_FILES) {
    const recorded = manifest.files[name];
    if (recorded === undefined) throw new BaseCheckpointError(`${file}: files: no hash for ${name}`);
    const path = join(dir, name);
    if (!existsSync(path)) throw new BaseCheckpointError(`${path}: missing (the manifest lists it)`);
    if (sha256(path) !== recorded) throw new BaseCheckpointError(`${path}: SHA-256 differs from ${file} (rebuild it with: ${manifest.command})`);
  }
  return manifest;
}

/** The config's `model` keys and the Hugging Face `config.json` keys they must equal. */
const SHAPE_KEYS = [
  ["hidden_size", "hidden_size"],
  ["intermediate_size", "intermediate_size"],
  ["num_hidden_layers", "num_hidden_layers"],
  ["num_attention_heads", "num_attention_heads"],
  ["max_position_embeddings", "max_position_embeddings"],
] as const;

/**
 * The checkpoint folder `init_from` names: a path as given, or `embedded:<name>` for a shipped
 * base, whose files are checked against its manifest first. A tiny model's shape in the config
 * must be the checkpoint's, or the run would silently train another model than the config says.
 */
export function resolveInitFrom(initFrom: string, model?: TinyModelConfig): string {
  let dir = initFrom;
  if (initFrom.startsWith(EMBEDDED)) {
    dir = join(embeddedCheckpointsDirectory(), initFrom.slice(EMBEDDED.length));
    if (!existsSync(dir)) throw new BaseCheckpointError(`init_from: no shipped checkpoint ${initFrom} (looked for ${dir})`);
    verifyBase(dir);
  }
  const file = join(dir, "config.json");
  if (model !== undefined && existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const differ = SHAPE_KEYS.filter(([key, hf]) => saved[hf] !== model[key]).map(
      ([key, hf]) => `model.${key} is ${model[key]}, the checkpoint's ${String(saved[hf])}`,
    );
    if (differ.length > 0) throw new BaseCheckpointError(`init_from ${initFrom}: ${differ.join("; ")} (${file})`);
  }
  return dir;
}

/** Copy the weights of `checkpointDir` to `outDir` with a manifest recording how they were built. */
export function exportBase(checkpointDir: string, outDir: string, build: Omit<BaseManifest, "format" | "files">): BaseManifest {
  mkdirSync(outDir, { recursive: true });
  const files = Object.create(null) as Record<string, string>;
  for (const name of BASE_FILES) {
    copyFileSync(join(checkpointDir, name), join(outDir, name));
    files[name] = sha256(join(outDir, name));
  }
  const manifest: BaseManifest = { format: 1, ...build, files };
  // Written last and whole: a folder with a manifest holds every file it lists.
  writeFileAtomically(join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
