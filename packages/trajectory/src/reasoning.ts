/** The tags around a model's private reasoning. */
export interface ReasoningTags {
  open: string;
  close: string;
}

export const THINK_TAGS: ReasoningTags = { open: "<think>", close: "</think>" };

export interface SplitReasoning {
  /** The reasoning without its tags and surrounding whitespace; `undefined` when there was none. */
  reasoning: string | undefined;
  /** What follows the reasoning, trimmed. Empty when the reasoning never closed. */
  content: string;
  /** False when a reasoning block opened but never closed (typically a truncated output). */
  closed: boolean;
}

/**
 * Separate a leading reasoning block from the visible output. Three shapes are recognised:
 * `<think>…</think>rest`; `…</think>rest` with no opening tag (the chat template opened the block in
 * the prompt, as DeepSeek-R1-style templates do); and `<think>…` that never closes (all reasoning,
 * no content). Reasoning tags anywhere else are left in the content.
 */
export function splitReasoning(text: string, tags: ReasoningTags | false = THINK_TAGS): SplitReasoning {
  if (tags === false) return { reasoning: undefined, content: text.trim(), closed: true };
  const start = text.trimStart();
  if (start.startsWith(tags.open)) {
    const body = start.slice(tags.open.length);
    const end = body.indexOf(tags.close);
    if (end < 0) return { reasoning: body.trim(), content: "", closed: false };
    return { reasoning: body.slice(0, end).trim(), content: body.slice(end + tags.close.length).trim(), closed: true };
  }
  const end = text.indexOf(tags.close);
  if (end >= 0 && !text.slice(0, end).includes(tags.open)) {
    return { reasoning: text.slice(0, end).trim(), content: text.slice(end + tags.close.length).trim(), closed: true };
  }
  return { reasoning: undefined, content: text.trim(), closed: true };
}
