import { EnvaceError, InvariantError } from "@envace/errors";
import { GenerateRequest, type SampledTokens, type Sampler, type Task, type Tokenizer, type ToolSpec } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { ChatTemplate, ChatTemplateError } from "./chat-template.js";
import { canContinue, IncrementalRenderer } from "./incremental.js";
import { rehearsal } from "./rehearsal-environment.js";
import { SamplerPolicy } from "./sampler-policy.js";
import { ScriptedEnvironment } from "./scripted-environment.js";
import { ScriptedPolicy } from "./scripted-policy.js";
import { unfold } from "./unfold.js";
import { singleTurn } from "./user-turns.js";

// A minimal ChatML template and a tokenizer with one special token, so token ids are easy to read.
const CHATML = `{%- for m in messages -%}
{{- '<|im_start|>' + m.role + '\\n' }}
{%- if m.role == 'assistant' and m.tool_calls -%}
{%- for c in m.tool_calls -%}<tool_call>{{ c.function.arguments }}</tool_call>{%- endfor -%}
{%- else -%}{{ m.content }}{%- endif -%}
{{- '<|im_end|>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}`;

const SPECIAL = ["<|im_start|>", "<|im_end|>"];
const END = 0x10001;
const tokenizer: Tokenizer = {
  vocabSize: 0x10002,
  stopTokenIds: [END],
  encode(text) {
    const ids: number[] = [];
    for (const part of text.split(/(<\|im_start\|>|<\|im_end\|>)/)) {
      const special = SPECIAL.indexOf(part);
      if (special >= 0) ids.push(0x10000 + special);
      else for (const ch of part) ids.push(ch.charCodeAt(0));
    }
    return ids;
  },
  decode: (ids) => ids.map((id) => (id >= 0x10000 ? SPECIAL[id - 0x10000]! : String.fromCharCode(id))).join(""),
};

class ScriptedSampler implements Sampler {
  readonly prompts: number[][] = [];
  constructor(private readonly outputs: string[]) {}
  sample(promptTokens: readonly number[]): Promise<SampledTokens> {
    this.prompts.push([...promptTokens]);
    const tokens = [...tokenizer.encode(this.outputs.shift() ?? "out of script"), END];
    return Promise.resolve({ tokens, logprobs: tokens.map(() => -1), finishReason: "stop" });
  }
}

const tools: ToolSpec[] = [{ type: "function", function: { name: "lookup" } }];
const task: Task = { id: "t", messages: [{ role: "user", content: "Find x." }], tools, metadata: {} };
const env = new ScriptedEnvironment(tools, () => ({ x: 1 }));

const SECOND_PROMPT =
  '<|im_start|>user\nFind x.<|im_end|>\n<|im_start|>assistant\n<tool_call>{"name": "lookup", "arguments": {}}</tool_call><|im_end|>\n' +
  '<|im_start|>tool\n{"x":1}<|im_end|>\n<|im_start|>assistant\n';

describe("unfold with a token-level policy", () => {
  it("samples every Act turn after the first from the exact tokens before it", async () => {
    const sampler = new ScriptedSampler(['<tool_call>{"name": "lookup", "arguments": {}}</tool_call>', "x is 1."]);
    const policy = new SamplerPolicy({ id: "toy", sampler, tokenizer, template: new ChatTemplate(CHATML) });
    expect(canContinue(policy)).toBe(true);
    const trajectory = await unfold({ task, actor: policy, environment: env, users: singleTurn });

    expect(trajectory.termination).toEqual({ reason: "agent_stop" });
    const [first, second] = sampler.prompts as [number[], number[]];
    const step = trajectory.steps[0]!;
    const firstOutput = step.type === "act" ? step.generation.outputTokens : [];
    expect(second.slice(0, first.length + firstOutput.length)).toEqual([...first, ...firstOutput]);
    expect(tokenizer.decode(second)).toBe(SECOND_PROMPT);
  });

  it("ends the rollout before sampling when the next prompt would pass maxPromptTokens", async () => {
    const sampler = new ScriptedSampler(['<tool_call>{"name": "lookup", "arguments": {}}</tool_call>']);
    const policy = new SamplerPolicy({ id: "toy", sampler, tokenizer, template: new ChatTemplate(CHATML) });
    const trajectory = await unfold({ task, actor: policy, environment: env, limits: { maxPromptTokens: 60 } });
    expect(sampler.prompts).toHaveLength(1);
    // SECOND_PROMPT: 105 characters and 7 special tokens.
    expect(trajectory.termination).toEqual({ reason: "max_tokens", limit: 60, detail: "act prompt of 112 tokens" });
  });

  it("renders Rehearse prompts in full: they are new conversations", async () => {
    const sampler = new ScriptedSampler([
      '<tool_call>{"name": "lookup", "arguments": {}}</tool_call>',
      '<execution_result>{"x": 2}</execution_result>',
      "x is 2.",
    ]);
    const policy = new SamplerPolicy({ id: "toy", sampler, tokenizer, template: new ChatTemplate(CHATML) });
    const trajectory = await unfold({ task, actor: policy, environment: rehearsal(policy), users: singleTurn });
    expect(trajectory.termination).toEqual({ reason: "agent_stop" });
    expect(tokenizer.decode(sampler.prompts[1]!)).toMatch(/^<\|im_start\|>system\nYou play the environment/);
  });

  it("plain policies get no promptTokens", async () => {
    const seen: (number[] | undefined)[] = [];
    const policy = new ScriptedPolicy("plain", (request) => {
      seen.push(request.promptTokens);
      return request.messages.length > 1 ? "Done." : '<tool_call>{"name": "lookup", "arguments": {}}</tool_call>';
    });
    await unfold({ task, actor: policy, environment: env, users: singleTurn });
    expect(seen).toEqual([undefined, undefined]);
  });
});

describe("IncrementalRenderer", () => {
  it("refuses a template that does not render assistant content verbatim", () => {
    const renderer = new IncrementalRenderer(new ChatTemplate("{% for m in messages %}{{ m.content | upper }}{% endfor %}"), tokenizer);
    expect(() => renderer.continuationText([{ role: "user", content: "hi" }])).toThrow(ChatTemplateError);
  });

  it("reports templates that do not parse or that raise", () => {
    expect(() => new ChatTemplate("{% for %}")).toThrow("chat template does not parse");
    const raising = new ChatTemplate("{{ raise_exception('roles must alternate') }}");
    expect(() => raising.render([])).toThrow("chat template failed to render: roles must alternate");
    const error = (() => {
      try {
        raising.render([]);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(EnvaceError);
    expect(error).toMatchObject({ code: "chat-template", name: "ChatTemplateError", isRetryable: false });
  });
});

describe("policies whose own parts disagree", () => {
  const request = GenerateRequest.parse({ role: "act", messages: task.messages, sampling: {} });

  it("a sampler answering a logprob count unlike its token count is an InvariantError naming both", async () => {
    const sampler: Sampler = { sample: () => Promise.resolve({ tokens: [104, 105, END], logprobs: [-1, -1], finishReason: "stop" }) };
    const policy = new SamplerPolicy({ id: "toy", sampler, tokenizer, template: new ChatTemplate(CHATML) });
    const failure = policy.generate(request);
    await expect(failure).rejects.toBeInstanceOf(InvariantError);
    await expect(failure).rejects.toThrow("sampler of toy returned 2 logprobs for 3 tokens");
  });

  it("a script shorter than the conversation is an InvariantError naming the role", async () => {
    const policy = ScriptedPolicy.queues("scripted", { act: ["Hi."] });
    await expect(policy.generate(request)).resolves.toMatchObject({ text: "Hi." });
    const failure = policy.generate(request);
    await expect(failure).rejects.toBeInstanceOf(InvariantError);
    await expect(failure).rejects.toThrow('scripted: no scripted reply left for role "act"');
  });
});
