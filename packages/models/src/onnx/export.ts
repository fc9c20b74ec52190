import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomically } from "@envace/records";
import { checkLlamaTensors, llamaShape, readLlamaConfig, readSafetensors, type LlamaConfig, type NamedTensor } from "@envace/training";
import { buildLlamaModel, type LlamaGraphOptions } from "./llama-graph.js";
import { OnnxModelError } from "./errors.js";

/** Protobuf cannot hold a message of 2 GiB or more; larger models need external data. */
const PROTOBUF_LIMIT = 2 ** 31 - 1;

/** Files copied beside `model.onnx` when the checkpoint has them, so the folder loads like a Hugging Face export. */
const COMPANION_FILES = ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja"];

export interface ExportResult {
  modelPath: string;
  /** Size of `model.onnx`. */
  bytes: number;
  /** Every file written to the output folder. */
  files: string[];
}

/** The ONNX model of a Llama checkpoint held in memory (for weight sync without touching disk). */
export function llamaOnnxBytes(
  config: LlamaConfig,
  weights: ReadonlyMap<string, NamedTensor>,
  source = "weights",
  options: LlamaGraphOptions = {},
): Uint8Array {
  const shape = llamaShape(config);
  checkLlamaTensors(shape, weights, source);
  let total = 0;
  for (const tensor of weights.values()) total += tensor.data.byteLength;
  if (total >= PROTOBUF_LIMIT) throw new OnnxModelError(`${source}: ${total} bytes of weights exceed the 2 GiB a single ONNX file can hold`);
  return buildLlamaModel(shape, weights, options);
}

/**
 * Export a Llama checkpoint folder (Hugging Face `config.json`, `model.safetensors`,
 * tokenizer files) to an ONNX folder in the exporters' layout: `model.onnx` with a KV cache
 * interface, plus the config and tokenizer files, so `loadOnnxPolicy` and any Hugging Face ONNX
 * loader read it.
 */
export async function exportLlamaCheckpoint(checkpointDir: string, outDir: string, options: LlamaGraphOptions = {}): Promise<ExportResult> {
  const info = await stat(checkpointDir).catch(() => undefined);
  if (!info?.isDirectory()) throw new OnnxModelError(`checkpoint folder not found: ${checkpointDir}`);
  const config = await readLlamaConfig(join(checkpointDir, "config.json"));
  const weightsPath = join(checkpointDir, "model.safetensors");
  const weights = await readSafetensors(weightsPath);
  const bytes = llamaOnnxBytes(config, weights, weightsPath, options);
  await mkdir(outDir, { recursive: true });
  const modelPath = join(outDir, "model.onnx");
  // Each file whole or not at all: a killed export never leaves a truncated model for a loader to read.
  writeFileAtomically(modelPath, bytes);
  const files = [modelPath];
  for (const name of COMPANION_FILES) {
    const from = join(checkpointDir, name);
    if (
      await stat(from).then(
        (s) => s.isFile(),
        () => false,
      )
    ) {
      writeFileAtomically(join(outDir, name), await readFile(from));
      files.push(join(outDir, name));
    }
  }
  return { modelPath, bytes: bytes.byteLength, files };
}
