import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadCheckpoint } from "./checkpoint.js";
import { InProcessBackend } from "./in-process.js";
import { parameterSpecs } from "./parameters.js";
import { decodeSafetensors, encodeSafetensors } from "./safetensors.js";
import { trainTokenizer } from "./train-tokenizer.js";
import { checkpointDir, latestCheckpoint, resumeConfig, trainStep } from "./testing/resume-fixture.js";

const repoRoot = resolve(import.meta.dirname, "../../..");
const scratch = await mkdtemp(join(tmpdir(), "envace-training-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("safetensors", () => {
  it("round-trips named float32 tensors and metadata, with the data 8-byte aligned", () => {
    const tensors = new Map([
      ["a", { shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) }],
      ["b.weight", { shape: [1], data: Float32Array.from([-0.5]) }],
    ]);
    const bytes = encodeSafetensors(tensors, { format: "pt" });
    const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect((8 + headerLength) % 8).toBe(0);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<string, unknown>;
    expect(header.a).toEqual({ dtype: "F32", shape: [2, 3], data_offsets: [0, 24] });
    const decoded = decodeSafetensors(bytes, "x.safetensors");
    expect(decoded.metadata).toEqual({ format: "pt" });
    expect([...decoded.tensors.keys()]).toEqual(["a", "b.weight"]);
    expect(Array.from(decoded.tensors.get("a")!.data)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("reads bfloat16 and float16 tensors as float32", () => {
    const header = new TextEncoder().encode(
      JSON.stringify({ h: { dtype: "F16", shape: [2], data_offsets: [0, 4] }, b: { dtype: "BF16", shape: [1], data_offsets: [4, 6] } }),
    );
    const bytes = new Uint8Array(8 + header.length + 6);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
    bytes.set(header, 8);
    // float16 1.0 = 0x3c00, -2.0 = 0xc000; bfloat16 0.5 = 0x3f00.
    new Uint8Array(bytes.buffer, 8 + header.length).set([0x00, 0x3c, 0x00, 0xc0, 0x00, 0x3f]);
    const decoded = decodeSafetensors(bytes, "half.safetensors");
    expect(Array.from(decoded.tensors.get("h")!.data)).toEqual([1, -2]);
    expect(Array.from(decoded.tensors.get("b")!.data)).toEqual([0.5]);
  });

  it("names the file and the problem for damaged input", () => {
    const good = encodeSafetensors(new Map([["a", { shape: [4], data: new Float32Array(4) }]]));
    expect(() => decodeSafetensors(good.subarray(0, 5), "short.safetensors")).toThrow(/short.safetensors: too short/);
    expect(() => decodeSafetensors(good.subarray(0, good.length - 4), "cut.safetensors")).toThrow(
      /cut.safetensors: tensor a: data_offsets \[0, 16\] do not fit/,
    );
    const huge = good.slice();
    new DataView(huge.buffer).setBigUint64(0, 1n << 40n, true);
    expect(() => decodeSafetensors(huge, "bad.safetensors")).toThrow(/bad.safetensors: header length .* exceeds the file size/);
  });
});

describe("checkpoints", () => {
  it("replace the previous one only when complete, and load it when a save died between its two renames", async () => {
    const dir = join(scratch, "swap", "policy");
    const first = await InProcessBackend.create(resumeConfig, { seed: 1 });
    await first.saveCheckpoint(dir);
    const firstWeights = (await loadCheckpoint(dir)).params.get("model.embed_tokens.weight")!;
    const second = await InProcessBackend.create(resumeConfig, { seed: 2 });
    await second.saveCheckpoint(dir);
    const secondWeights = (await loadCheckpoint(dir)).params.get("model.embed_tokens.weight")!;
    expect(Array.from(secondWeights)).not.toEqual(Array.from(firstWeights));
    expect(await readdir(join(scratch, "swap"))).toEqual(["policy"]);
    // The state a kill leaves after the old folder was moved aside and before the new one took the name.
    await rename(dir, join(scratch, "swap", ".policy.old"));
    expect(Array.from((await loadCheckpoint(dir)).params.get("model.embed_tokens.weight")!)).toEqual(Array.from(secondWeights));
    // The next save puts the name back in order first, then replaces it.
    await first.saveCheckpoint(dir);
    expect(Array.from((await loadCheckpoint(dir)).params.get("model.embed_tokens.weight")!)).toEqual(Array.from(firstWeights));
    expect(await readdir(join(scratch, "swap"))).toEqual(["policy"]);
  });

  it("hold a Hugging Face LlamaForCausalLM config and weights with Hugging Face names and layout", async () => {
    const backend = await InProcessBackend.create(resumeConfig, { seed: 1 });
    const dir = join(scratch, "hf");
    await backend.saveCheckpoint(dir);
    const config = JSON.parse(await readFile(join(dir, "config.json"), "utf8")) as Record<string, unknown>;
    expect(config).toMatchObject({
      architectures: ["LlamaForCausalLM"],
      model_type: "llama",
      vocab_size: 32,
      hidden_size: 32,
      intermediate_size: 64,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
    });
    const { tensors } = decodeSafetensors(new Uint8Array(await readFile(join(dir, "model.safetensors"))), "model.safetensors");
    expect(Object.fromEntries([...tensors].map(([name, t]) => [name, t.shape]))).toMatchObject({
      "model.embed_tokens.weight": [32, 32],
      "model.layers.1.self_attn.q_proj.weight": [32, 32],
      "model.layers.0.mlp.gate_proj.weight": [64, 32],
      "model.layers.0.mlp.down_proj.weight": [32, 64],
      "model.layers.1.post_attention_layernorm.weight": [32],
      "model.norm.weight": [32],
    });
    expect(tensors.size).toBe(parameterSpecs(backend.config).length);
    const params = backend.parameters();
    expect(tensors.get("model.layers.0.mlp.up_proj.weight")!.data).toEqual(params.get("model.layers.0.mlp.up_proj.weight"));
    backend.dispose();
  });

  it("say which file and field is wrong", async () => {
    const backend = await InProcessBackend.create(resumeConfig, { seed: 1 });
    const dir = join(scratch, "broken");
    await backend.saveCheckpoint(dir);
    backend.dispose();
    const config = JSON.parse(await readFile(join(dir, "config.json"), "utf8")) as Record<string, unknown>;
    await writeFile(join(dir, "config.json"), JSON.stringify({ ...config, num_key_value_heads: 1 }));
    await expect(loadCheckpoint(dir)).rejects.toThrow(/config.json: num_key_value_heads: must equal num_attention_heads/);
    await writeFile(join(dir, "config.json"), JSON.stringify({ ...config, hidden_size: 48, head_dim: 24 }));
    await expect(loadCheckpoint(dir)).rejects.toThrow(/model.safetensors: model.embed_tokens.weight has shape \[32, 32\], expected \[32, 48\]/);
  });

  it("resume in-process to the bit: weights, optimizer and the next step's loss", async () => {
    const a = await InProcessBackend.create(resumeConfig, { seed: 3 });
    await trainStep(a);
    await trainStep(a);
    const dir = join(scratch, "in-process");
    await a.saveCheckpoint(dir);
    const b = await InProcessBackend.load(dir);
    expect(b.optimizerStep).toBe(2);
    expect(b.parameters()).toEqual(a.parameters());
    expect(await trainStep(b)).toBe(await trainStep(a));
    expect(b.parameters()).toEqual(a.parameters());
    a.dispose();
    b.dispose();
  });

  it("carry the tokenizer, which loading restores (with its stop tokens)", async () => {
    const tokenizer = trainTokenizer(["hello world, hello tools"], { vocabSize: 280 });
    const backend = await InProcessBackend.create({ ...resumeConfig, vocabSize: tokenizer.vocabSize }, { seed: 1, tokenizer });
    const dir = join(scratch, "with-tokenizer");
    await backend.saveCheckpoint(dir);
    backend.dispose();
    const hfJson = JSON.parse(await readFile(join(dir, "tokenizer.json"), "utf8")) as { added_tokens: { content: string }[] };
    expect(hfJson.added_tokens.map((t) => t.content)).toContain("<|im_end|>");
    const loaded = await InProcessBackend.load(dir);
    expect(loaded.tokenizer!.encode("hello <|im_end|>")).toEqual(tokenizer.encode("hello <|im_end|>"));
    expect(loaded.tokenizer!.stopTokenIds).toEqual(tokenizer.stopTokenIds);
    loaded.dispose();
  });

  it("refuse to save with gradients pending, which a checkpoint would lose", async () => {
    const backend = await InProcessBackend.create(resumeConfig, { seed: 3 });
    await backend.forwardBackward([{ tokens: [1, 2], targetTokens: [2, 3], logprobs: [0, 0], advantages: [0, 0], mask: [1, 1] }], { type: "cross_entropy" });
    await expect(backend.saveCheckpoint(join(scratch, "pending"))).rejects.toThrow(/checkpoint between steps/);
    backend.dispose();
  });
});

interface ChildLine {
  resumedFrom?: number | null;
  step?: number;
  loss?: number;
}

/** Run the training child; `killAfterStep` SIGKILLs it as soon as it reports that step. */
function runChild(runDir: string, steps: number, killAfterStep?: number): Promise<{ lines: ChildLine[]; signal: NodeJS.Signals | null }> {
  const child = spawn(
    process.execPath,
    ["--conditions=@envace/source", "--import", "tsx", join(import.meta.dirname, "testing", "resume-child.ts"), runDir, String(steps)],
    {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const lines: ChildLine[] = [];
  let stderr = "";
  let buffer = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = JSON.parse(buffer.slice(0, newline)) as ChildLine;
      buffer = buffer.slice(newline + 1);
      lines.push(line);
      if (killAfterStep !== undefined && line.step === killAfterStep) child.kill("SIGKILL");
    }
  });
  return new Promise((resolvePromise, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`training child failed (${code}): ${stderr}`));
      else resolvePromise({ lines, signal });
    });
  });
}

describe("a training process killed between steps", () => {
  it("resumes from its last checkpoint and reproduces the uninterrupted run's losses exactly", async () => {
    const steps = 6;
    const reference = await InProcessBackend.create(resumeConfig, { seed: 3 });
    const expected: number[] = [];
    for (let i = 0; i < steps; i++) expected.push(await trainStep(reference));
    reference.dispose();

    const runDir = join(scratch, "killed");
    const first = await runChild(runDir, steps, 2);
    expect(first.signal).toBe("SIGKILL");
    const latest = await latestCheckpoint(runDir);
    expect(latest!.step).toBeGreaterThanOrEqual(2);
    expect(latest!.step).toBeLessThan(steps);
    expect(latest!.dir).toBe(checkpointDir(runDir, latest!.step));

    const second = await runChild(runDir, steps);
    expect(second.lines[0]).toEqual({ resumedFrom: latest!.step });
    const resumed = second.lines.slice(1);
    expect(resumed.map((l) => l.step)).toEqual(Array.from({ length: steps - latest!.step }, (_, i) => latest!.step + i + 1));
    // The next step's loss, and every one after, equal the uninterrupted run's to the bit.
    expect(resumed.map((l) => l.loss)).toEqual(expected.slice(latest!.step));
    // The first process's losses agree too: killing it changed nothing before the kill.
    for (const l of first.lines.filter((l) => l.step !== undefined)) expect(l.loss).toBe(expected[l.step! - 1]);
  }, 60_000);
});
