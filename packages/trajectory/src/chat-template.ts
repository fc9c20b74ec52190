import { Template } from "@huggingface/jinja";
import { EnvaceError } from "@envace/errors";
import type { Message, ToolSpec } from "@envace/protocol";

/** Options of one chat-template rendering. */
export interface RenderOptions {
  /** Tools offered to the model; templates such as Qwen3's list them in the system turn. */
  tools?: readonly ToolSpec[];
  /** End with the header of a new assistant turn, ready for generation. */
  addGenerationPrompt?: boolean;
  /** Further template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  variables?: Readonly<Record<string, unknown>>;
}

/** A chat template failed to parse or to render (including the template's own `raise_exception`). */
export class ChatTemplateError extends EnvaceError {
  override readonly code = "chat-template";
}

/** Special-token strings a template may refer to (`bos_token`, `eos_token`, …). */
export type TemplateSpecialTokens = Readonly<Partial<Record<"bos_token" | "eos_token" | "pad_token" | "unk_token", string>>>;

/**
 * A model's Jinja chat template (the `chat_template` of a Hugging Face `tokenizer_config.json`),
 * rendered with the same semantics as `transformers`' `apply_chat_template(tokenize=False)`.
 *
 * Messages are passed in the OpenAI shape of `@envace/protocol`. Two normalisations happen on the
 * way in, as inference servers do: fields that are `undefined` are dropped (so `is defined` tests
 * behave), and an assistant `content: null` (OpenAI's form for a pure tool-call turn) becomes `""`.
 */
export class ChatTemplate {
  readonly source: string;
  readonly specialTokens: TemplateSpecialTokens;
  readonly #template: Template;

  constructor(source: string, specialTokens: TemplateSpecialTokens = {}) {
    this.source = source;
    this.specialTokens = specialTokens;
    try {
      this.#template = new Template(source);
    } catch (error) {
      throw new ChatTemplateError(`chat template does not parse: ${(error as Error).message}`);
    }
  }

  render(messages: readonly Message[], options: RenderOptions = {}): string {
    const context: Record<string, unknown> = {
      ...this.specialTokens,
      ...options.variables,
      messages: messages.map(templateMessage),
      add_generation_prompt: options.addGenerationPrompt ?? false,
    };
    if (options.tools !== undefined && options.tools.length > 0) context.tools = options.tools;
    try {
      return this.#template.render(context);
    } catch (error) {
      throw new ChatTemplateError(`chat template failed to render: ${(error as Error).message}`);
    }
  }
}

function templateMessage(message: Message): Record<string, unknown> {
  // No prototype: a `__proto__` field of a client's message stays a field the template can see.
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, value] of Object.entries(message) as [string, unknown][]) {
    if (value !== undefined) out[key] = value;
  }
  // OpenAI's `content: null` on a tool-call turn; templates test and slice content as a string.
  if (out.content === null) out.content = "";
  return out;
}
