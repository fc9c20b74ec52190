import { CheckpointError } from "./errors.js";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseRecord } from "@envace/protocol";
import { readableDirectory, replaceDirectory } from "@envace/records";
import { z } from "zod";
import { fromHfConfig, toHfConfig, type TinyModelConfig } from "./config.js";
import { checkParameters, parameterSpecs, type Parameters } from "./parameters.js";
import { decodeSafetensors, encodeSafetensors, type NamedTensor } from "./safetensors.js";

/**
 * A checkpoint folder, readable by Hugging Face tools for the model part:
 *
 * - `config.json` — `LlamaForCausalLM` config;
 * - `model.safetensors` — float32 weights with Hugging Face names and layout;
 * - `optimizer.safetensors` — AdamW moments, `<parameter>.exp_avg` and `<parameter>.exp_avg_sq`;
 * - `training_state.json` — optimizer step count and the backend's random generator state;
 * - `tokenizer.json`, `tokenizer_config.json` — when the model has a tokenizer.
 */
/** AdamW state on the host: moments by Hugging Face parameter name, in Hugging Face layout. */
export interface HostAdamState {
  step: number;
  m: Parameters;
  v: Parameters;
}

export interface CheckpointContents {
  config: TinyModelConfig;
  params: Parameters;
  /** Optimizer state; null for weights only. */
  adam: HostAdamState | null;
  /** The backend's random generator state, so sampling after a resume continues the same stream. */
  rngState: number[] | null;
  /** The tokenizer files as JSON values, written verbatim. */
  tokenizer?: { tokenizerJson: unknown; tokenizerConfig: unknown } | undefined;
}

export const TrainingStateFile = z.object({
  format: z.literal("envace-tiny-training-state"),
  version: z.literal(1),
  optimizerStep: z.number().int().nonnegative(),
  rngState: z.array(z.number().int().nonnegative()).length(4).nullable(),
});
export type TrainingStateFile = z.infer<typeof TrainingStateFile>;

function tensorsOf(config: TinyModelConfig, params: Parameters): Map<string, NamedTensor> {
  return new Map(parameterSpecs(config).map((spec) => [spec.name, { shape: spec.shape, data: params.get(spec.name)! }]));
}

/**
 * Write a checkpoint to `dir` atomically: everything goes to a sibling temporary folder, which is
 * fsynced and only then takes the name (the previous checkpoint is moved aside first and deleted
 * after; see `replaceDirectory`), so a process killed mid-save leaves the previous checkpoint or
 * the new one, never a half-written one; `loadCheckpoint` finds the previous one if the kill
 * landed between the two renames.
 */
export async function saveCheckpoint(dir: string, contents: CheckpointContents): Promise<void> {
  const { config, params, adam } = contents;
  checkParameters(config, new Map([...params].map(([name, data]) => [name, { data }])), "checkpoint parameters");
  await replaceDirectory(dir, async (tmp) => {
    const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
    await writeFile(join(tmp, "config.json"), json(toHfConfig(config)));
    await writeFile(join(tmp, "model.safetensors"), encodeSafetensors(tensorsOf(config, params), { format: "pt" }));
    if (adam) {
      const moments = new Map<string, NamedTensor>();
      for (const spec of parameterSpecs(config)) {
        moments.set(`${spec.name}.exp_avg`, { shape: spec.shape, data: adam.m.get(spec.name)! });
        moments.set(`${spec.name}.exp_avg_sq`, { shape: spec.shape, data: adam.v.get(spec.name)! });
      }
      await writeFile(join(tmp, "optimizer.safetensors"), encodeSafetensors(moments, { optimizer: "adamw" }));
    }
    const state: TrainingStateFile = {
      format: "envace-tiny-training-state",
      version: 1,
      optimizerStep: adam?.step ?? 0,
      rngState: contents.rngState,
    };
    await writeFile(join(tmp, "training_state.json"), json(state));
    if (contents.tokenizer) {
      await writeFile(join(tmp, "tokenizer.json"), json(contents.tokenizer.tokenizerJson));
      await writeFile(join(tmp, "tokenizer_config.json"), json(contents.tokenizer.tokenizerConfig));
    }
  });
}

export interface LoadOptions {
  /** Also load the optimizer state (default true); it must then be present. */
  optimizer?: boolean;
}

/** Read a checkpoint folder written by `saveCheckpoint` (or a Hugging Face folder, weights only). */
export async function loadCheckpoint(saved: string, options: LoadOptions = {}): Promise<CheckpointContents> {
  // A save killed between moving the previous checkpoint aside and renaming the new one in left it beside the name.
  const dir = readableDirectory(saved);
  const configFile = join(dir, "config.json");
  const config = fromHfConfig(await readJson(configFile), { file: configFile });
  const modelFile = join(dir, "model.safetensors");
  const model = decodeSafetensors(await readBytes(modelFile), modelFile);
  checkParameters(config, model.tensors, modelFile);
  const params: Parameters = new Map(parameterSpecs(config).map((spec) => [spec.name, model.tensors.get(spec.name)!.data]));
  const stateFile = join(dir, "training_state.json");
  const state = (await exists(stateFile)) ? parseRecord(TrainingStateFile, await readJson(stateFile), { file: stateFile }) : null;
  let adam: HostAdamState | null = null;
  if (options.optimizer ?? true) {
    const optimizerFile = join(dir, "optimizer.safetensors");
    if (!state || !(await exists(optimizerFile))) {
      throw new CheckpointError(`${dir}: holds no optimizer state (training_state.json and optimizer.safetensors); load it with { optimizer: false }`);
    }
    const moments = decodeSafetensors(await readBytes(optimizerFile), optimizerFile);
    const m: Parameters = new Map();
    const v: Parameters = new Map();
    const problems: string[] = [];
    for (const spec of parameterSpecs(config)) {
      const size = spec.shape.reduce((a, b) => a * b, 1);
      for (const [suffix, target] of [
        ["exp_avg", m],
        ["exp_avg_sq", v],
      ] as const) {
        const t = moments.tensors.get(`${spec.name}.${suffix}`);
        if (t?.data.length !== size) problems.push(`${spec.name}.${suffix} is ${t ? `of size ${t.data.length}, expected ${size}` : "missing"}`);
        else target.set(spec.name, t.data);
      }
    }
    if (problems.length > 0) throw new CheckpointError(`${optimizerFile}: ${problems.join("; ")}`);
    adam = { step: state.optimizerStep, m, v };
  }
  const tokenizerFile = join(dir, "tokenizer.json");
  const tokenizerConfigFile = join(dir, "tokenizer_config.json");
  const tokenizer = (await exists(tokenizerFile))
    ? { tokenizerJson: await readJson(tokenizerFile), tokenizerConfig: (await exists(tokenizerConfigFile)) ? await readJson(tokenizerConfigFile) : {} }
    : undefined;
  return { config, params, adam, rngState: state?.rngState ?? null, tokenizer };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function readBytes(file: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(file));
  } catch (error) {
    throw new CheckpointError(`${file}: cannot read (${(error as Error).message})`, { cause: error });
  }
}

async function readJson(file: string): Promise<unknown> {
  const text = new TextDecoder().decode(await readBytes(file));
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CheckpointError(`${file}: not JSON (${(error as Error).message})`, { cause: error });
  }
}
