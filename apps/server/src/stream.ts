import type { ServerResponse } from "node:http";
import type { StreamingPolicy } from "@envace/models";
import { choiceOptions, newCompletionId, prepareTurn, type CompletionContext } from "./completion.js";
import { toApiError } from "./errors.js";
import type { ChatTurnRequest } from "./request.js";
import { choiceDeltas, toChoice, usageOf, type ChunkChoice } from "./response.js";

/**
 * Server-sent events on a raw response. Nothing is written until the first event, so a request
 * that fails before the model produced anything still gets a plain HTTP error.
 */
export class SseWriter {
  #started = false;
  constructor(readonly res: ServerResponse) {}

  get started(): boolean {
    return this.#started;
  }

  event(data: unknown): void {
    if (!this.#started) {
      this.#started = true;
      this.res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    }
    this.res.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  done(): void {
    this.res.end("data: [DONE]\n\n");
  }
}

/**
 * A streamed completion from a policy that streams (an upstream OpenAI-compatible server): after
 * any rehearsal, the committed turn's text goes out as it is generated. With tools, the output is
 * read as tool calls only once it is complete (a `<tool_call>` block is not a tool call until it
 * closes), so its deltas follow the model's last token; the chunks reassemble to the same answer
 * as without streaming. Throws, unwritten, what fails before the first event; after it, the
 * failure is sent as an `error` event.
 */
export async function streamCompletion(
  context: CompletionContext & { policy: StreamingPolicy },
  request: ChatTurnRequest,
  owner: string,
  signal: AbortSignal,
  sse: SseWriter,
  model: string,
): Promise<void> {
  const { messages, envace } = await prepareTurn(context, request, owner, signal);
  const id = newCompletionId();
  const head = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model };
  const send = (choice: ChunkChoice): void => {
    sse.event({ ...head, choices: [choice] });
  };
  const live = !request.parseToolCalls;
  let opened = false;
  const open = (): void => {
    if (opened) return;
    opened = true;
    send({ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null, logprobs: null });
  };
  try {
    const generation = await context.policy.generateStream(
      { role: "act", messages, tools: request.tools, sampling: request.sampling },
      (delta) => {
        if (!live) return;
        open();
        if (delta.reasoning !== undefined) send({ index: 0, delta: { reasoning_content: delta.reasoning }, finish_reason: null, logprobs: null });
        if (delta.content !== undefined) send({ index: 0, delta: { content: delta.content }, finish_reason: null, logprobs: null });
      },
      signal,
    );
    const choice = toChoice(generation, 0, choiceOptions(context, request, id, 0));
    if (live) {
      open();
      send({ index: 0, delta: {}, finish_reason: choice.finish_reason, logprobs: null });
    } else {
      for (const delta of choiceDeltas(choice)) send(delta);
    }
    if (request.includeUsage || envace !== undefined) {
      sse.event({ ...head, choices: [], ...(request.includeUsage ? { usage: usageOf([generation]) } : {}), ...(envace === undefined ? {} : { envace }) });
    }
    sse.done();
  } catch (error) {
    if (!sse.started || signal.aborted) throw error;
    sse.event(toApiError(error).body);
    sse.done();
  }
}
