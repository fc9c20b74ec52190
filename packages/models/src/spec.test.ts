import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GenerateRequest } from "@envace/protocol";
import { reply, startScriptedServer, type ScriptedServer } from "@envace/scripted-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAIChatPolicy } from "./openai/chat-policy.js";
import { exportLlamaCheckpoint } from "./onnx/export.js";
import { randomLlama, writeLlamaCheckpoint } from "./onnx/fixtures.js";
import { OnnxSampler } from "./onnx/sampler.js";
import { ModelSpecError, parseModelSpec, policyFromSpec } from "./spec.js";

describe("parseModelSpec", () => {
  it.each([
    {
      spec: "openai:http://localhost:8000/v1#Qwen/Qwen3-8B",
      parsed: { kind: "openai", baseURL: "http://localhost:8000/v1", model: "Qwen/Qwen3-8B", options: {} },
    },
    {
      spec: "openai:https://api.openai.com/v1#gpt-4.1,tokens=off,concurrency=8",
      parsed: { kind: "openai", baseURL: "https://api.openai.com/v1", model: "gpt-4.1", options: { tokens: "off", concurrency: "8" } },
    },
    {
      spec: "onnx:./models/qwen3-0.6b,threads=2,thinking=off",
      parsed: { kind: "onnx", dir: "./models/qwen3-0.6b", options: { threads: "2", thinking: "off" } },
    },
    { spec: "tiny:runs/a/checkpoints/step-40,engine=onnx", parsed: { kind: "tiny", dir: "runs/a/checkpoints/step-40", options: { engine: "onnx" } } },
  ])("reads $spec with its options", ({ spec, parsed }) => {
    expect(parseModelSpec(spec)).toEqual(parsed);
  });

  it.each([
    { spec: "vllm:http://x#m", problem: 'unknown kind "vllm"' },
    { spec: "openai:http://localhost:8000/v1", problem: 'the served model is missing after "#"' },
    { spec: "openai:localhost:8000#m", problem: '"localhost:8000" is not an http(s) base URL' },
    { spec: "onnx:", problem: "the folder is missing" },
    { spec: "onnx:./m,engine=onnx", problem: 'onnx takes no option "engine" (allowed: file, threads, thinking)' },
    { spec: "tiny:./c,fast", problem: 'option "fast" is not key=value' },
    { spec: "tiny:./c,__proto__=x", problem: 'tiny takes no option "__proto__" (allowed: engine, threads, thinking)' },
    { spec: "onnx:./m,constructor=x", problem: 'onnx takes no option "constructor" (allowed: file, threads, thinking)' },
  ])("refuses $spec: $problem, and shows the grammar", ({ spec, problem }) => {
    const parse = (): unknown => parseModelSpec(spec);
    expect(parse).toThrow(ModelSpecError);
    // The spec as given, what is wrong with it, then the grammar.
    expect(parse).toThrow(`model spec ${JSON.stringify(spec)}: ${problem}. Expected openai:<base-url>#<model>`);
  });

  it("gives options with no inherited names: an option not written is absent", () => {
    const { options } = parseModelSpec("tiny:./c,threads=2");
    expect(Object.keys(options)).toEqual(["threads"]);
    for (const name of ["toString", "constructor", "hasOwnProperty", "__proto__"]) expect(options[name]).toBeUndefined();
  });
});

describe("policyFromSpec", () => {
  let server: ScriptedServer;
  let root: string;
  let onnxDir: string;
  let checkpoint: string;

  beforeAll(async () => {
    server = await startScriptedServer({ models: ["m"] });
    root = await mkdtemp(join(tmpdir(), "envace-spec-"));
    const { config, weights } = randomLlama({ seed: 9 });
    checkpoint = join(root, "ckpt");
    onnxDir = join(root, "onnx");
    await writeLlamaCheckpoint(checkpoint, config, weights);
    await exportLlamaCheckpoint(checkpoint, onnxDir);
  });
  afterAll(async () => {
    await server.close();
    await rm(root, { recursive: true, force: true });
  });

  const ask = GenerateRequest.parse({ role: "act", messages: [{ role: "user", content: "Hi" }], sampling: { maxTokens: 4, seed: 1 } });

  it("openai chat: a chat policy with the spec's options", async () => {
    server.setScript([reply.text("hello")]);
    const resolved = await policyFromSpec(`openai:${server.baseURL}#m,server=vllm,thinking=off,retries=0,timeout=5`);
    expect(resolved.policy).toBeInstanceOf(OpenAIChatPolicy);
    expect(resolved.sampler).toBeUndefined();
    expect((await resolved.policy.generate(ask)).text).toBe("hello");
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/chat/completions"]);
    expect(server.requests[0]!.body).toMatchObject({ chat_template_kwargs: { enable_thinking: false } });
  });

  it("openai tokens: the chat template renders locally and token ids go through /v1/completions", async () => {
    server.clearRequests();
    server.setScript([
      reply.tokens([
        { id: 72, text: "H", logprob: -0.5 },
        { id: 258, text: "<|im_end|>", logprob: -0.1 },
      ]),
    ]);
    const resolved = await policyFromSpec(`openai:${server.baseURL}#m,mode=tokens,tokenizer=${onnxDir}`);
    const generation = await resolved.policy.generate(ask);
    expect(generation).toMatchObject({ text: "H", outputTokens: [72, 258], logprobs: [-0.5, -0.1] });
    const completion = server.requests.find((r) => r.path === "/v1/completions")!;
    expect(resolved.tokenizer!.decode((completion.body as { prompt: number[] }).prompt)).toBe("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    expect(generation.promptTokens).toEqual((completion.body as { prompt: number[] }).prompt);
  });

  it("onnx: the local model's policy and sampler", async () => {
    const resolved = await policyFromSpec(`onnx:${onnxDir},threads=1`);
    expect(resolved.sampler).toBeInstanceOf(OnnxSampler);
    const generation = await resolved.policy.generate(ask);
    expect(generation.outputTokens.length).toBeGreaterThan(0);
    expect(generation.logprobs).toHaveLength(generation.outputTokens.length);
  });

  it("refuses options that do not fit, and names a missing folder", async () => {
    await expect(policyFromSpec(`openai:${server.baseURL}#m,mode=tokens`)).rejects.toThrow("mode=tokens needs tokenizer=");
    await expect(policyFromSpec(`openai:${server.baseURL}#m,tokenizer=${onnxDir}`)).rejects.toThrow("tokenizer is used only with mode=tokens");
    await expect(policyFromSpec(`openai:${server.baseURL}#m,server=tgi`)).rejects.toThrow(
      'server must be one of vllm, sglang, llama.cpp, openai, unknown, got "tgi"',
    );
    await expect(policyFromSpec(`onnx:${onnxDir},threads=-1`)).rejects.toThrow('threads must be a positive number, got "-1"');
    await expect(policyFromSpec(`onnx:${join(root, "nowhere")}`)).rejects.toThrow(join(root, "nowhere"));
  });
});
