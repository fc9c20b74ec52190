import type { Generation, Message, Policy, Tokenizer, ToolSpec } from "@envace/protocol";
import { ChatTemplateError, type ChatTemplate } from "./chat-template.js";

/**
 * A policy that can extend the exact tokens of one of its own generations. The rollout engine
 * uses it to pass `promptTokens` on the next request, so the tokens the model sampled are never
 * re-templated (and a re-tokenisation can never disagree with what was sampled).
 */
export interface TokenContinuation {
  /**
   * The prompt tokens for the turn after `previous`: its prompt and output tokens, the closing of
   * that assistant turn, the template's rendering of `appended`, and a generation prompt.
   */
  continuePrompt(previous: Generation, appended: readonly Message[], tools: readonly ToolSpec[]): number[];
}

export function canContinue(policy: Policy): policy is Policy & TokenContinuation {
  return typeof (policy as Partial<TokenContinuation>).continuePrompt === "function";
}

// Stands in for the content of the assistant turn that was sampled; must reach the output verbatim.
const MARKER = "\u2063envace:end-of-sampled-turn\u2063";

/**
 * Renders a conversation one batch of messages at a time, appending tokens instead of
 * re-templating what came before.
 *
 * The text to append after a sampled assistant turn is found by rendering a two-message stand-in
 * conversation (a user turn, then an assistant turn whose content is a marker) followed by the new
 * messages, and taking everything after the marker: the template's own closing of the assistant
 * turn, the new messages, and the generation prompt. If the sampled tokens already end in a stop
 * token whose text opens that closing (Qwen3's `<|im_end|>`), it is not repeated.
 *
 * Where a template renders earlier turns differently once later turns exist, incremental and full
 * renders differ. Qwen3's template drops the `<think>` block of assistant turns before the latest
 * user query; incremental rendering keeps every turn exactly as it was sampled, which is what the
 * model saw when it generated the following tokens.
 */
export class IncrementalRenderer {
  readonly template: ChatTemplate;
  readonly tokenizer: Tokenizer;
  readonly variables: Readonly<Record<string, unknown>>;

  constructor(template: ChatTemplate, tokenizer: Tokenizer, variables: Readonly<Record<string, unknown>> = {}) {
    this.template = template;
    this.tokenizer = tokenizer;
    this.variables = variables;
  }

  /** Tokens of a whole prompt, ending in a generation prompt. */
  prompt(messages: readonly Message[], tools: readonly ToolSpec[] = []): number[] {
    return this.tokenizer.encode(this.template.render(messages, { tools, addGenerationPrompt: true, variables: this.variables }));
  }

  /**
   * The text that follows a sampled assistant turn: its closing, `appended`, and (by default) the
   * generation prompt of the next assistant turn.
   */
  continuationText(appended: readonly Message[], tools: readonly ToolSpec[] = [], addGenerationPrompt = true): string {
    const standIn: Message[] = [
      { role: "user", content: "Hello." },
      { role: "assistant", content: MARKER },
    ];
    const text = this.template.render([...standIn, ...appended], { tools, addGenerationPrompt, variables: this.variables });
    const at = text.indexOf(MARKER);
    if (at < 0 || text.includes(MARKER, at + 1)) {
      throw new ChatTemplateError("this chat template does not render assistant content verbatim, so it cannot be rendered incrementally");
    }
    return text.slice(at + MARKER.length);
  }

  /** Tokens to append after `outputTokens` (a sampled assistant turn) to add `appended`. */
  continuationTokens(outputTokens: readonly number[], appended: readonly Message[], tools: readonly ToolSpec[] = [], addGenerationPrompt = true): number[] {
    let text = this.continuationText(appended, tools, addGenerationPrompt);
    const last = outputTokens.at(-1);
    if (last !== undefined && this.tokenizer.stopTokenIds.includes(last)) {
      const stop = this.tokenizer.decode([last]);
      if (stop.length > 0 && text.startsWith(stop)) text = text.slice(stop.length);
    }
    return this.tokenizer.encode(text);
  }

  /** The full token sequence after `previous` with `appended` added: see `TokenContinuation`. */
  continuePrompt(previous: Generation, appended: readonly Message[], tools: readonly ToolSpec[] = []): number[] {
    return [...previous.promptTokens, ...previous.outputTokens, ...this.continuationTokens(previous.outputTokens, appended, tools)];
  }
}
