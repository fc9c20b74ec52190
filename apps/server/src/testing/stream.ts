// How an OpenAI client sees a stream of chat-completion chunks.
import type { ChatCompletionChunk } from "openai/resources/chat/completions";

/** A client's view of a stream: content and each tool call's pieces joined, in order. */
export async function reassemble(stream: AsyncIterable<ChatCompletionChunk>) {
  const choices = new Map<number, { content: string; calls: { id: string; name: string; arguments: string }[]; finish: string | null }>();
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      const choice = choices.get(c.index) ?? { content: "", calls: [], finish: null };
      choices.set(c.index, choice);
      choice.content += c.delta.content ?? "";
      for (const call of c.delta.tool_calls ?? []) {
        const known = (choice.calls[call.index] ??= { id: "", name: "", arguments: "" });
        known.id += call.id ?? "";
        known.name += call.function?.name ?? "";
        known.arguments += call.function?.arguments ?? "";
      }
      if (c.finish_reason) choice.finish = c.finish_reason;
    }
  }
  return [...choices.entries()].sort((a, b) => a[0] - b[0]).map(([, choice]) => choice);
}
