import type { ServerResponse } from "node:http";
import type { StreamingPolicy } from "@envace/models";
import { choiceOptions, committedRequest, newCompletionId, prepareTurn, type CompletionContext } from "./completion.js";
import { toApiError } from "./errors.js";
import type { ChatTurnRequest } from "./request.js";
import { LiveActStream } from "./live-act.js";
import { toChoice, usageOf, type ChunkChoice } from "./response.js";

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
 * A streamed completion from a policy that streams (an upstream OpenAI-compatible server, or a
 * local `tiny:`/`onnx:` model): after any rehearsal, the committed turn goes out as it is
 * generated. Without tools, the text is sent as it comes; with tools, `LiveActStream` sends
 * visible text and each tool call as soon as the Act parser's reading of them is settled. Throws,
 * unwritten, what fails before the first event; after it, the failure is sent as an `error` event.
 * A cancelled request stops the generation and sends nothing more.
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
  const options = choiceOptions(context, request, id, 0);
  const act = request.parseToolCalls ? new LiveActStream(options) : undefined;
  let opened = false;
  const open = (): void => {
    if (opened) return;
    opened = true;
    send({ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null, logprobs: null });
  };
  try {
    const generation = await context.policy.generateStream(
      committedRequest(request, messages),
      (delta) => {
        const chunks: ChunkChoice[] =
          act !== undefined
            ? act.push(delta.content ?? "")
            : [
                ...(delta.reasoning === undefined ? [] : [{ index: 0, delta: { reasoning_content: delta.reasoning }, finish_reason: null, logprobs: null }]),
                ...(delta.content === undefined ? [] : [{ index: 0, delta: { content: delta.content }, finish_reason: null, logprobs: null }]),
              ];
        if (chunks.length > 0) open();
        for (const chunk of chunks) send(chunk);
      },
      signal,
    );
    context.metrics.completionTokens.inc(generation.outputTokens.length);
    // A local sampler ends an aborted generation early and returns what it has: nobody reads the rest.
    signal.throwIfAborted();
    const choice = toChoice(generation, 0, options);
    open();
    for (const chunk of act?.finish(choice, generation.text) ?? [{ index: 0, delta: {}, finish_reason: choice.finish_reason, logprobs: null }]) send(chunk);
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
