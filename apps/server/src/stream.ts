import type { ServerResponse } from "node:http";
import type { StreamingPolicy } from "@envace/protocol";
import { choiceOptions, committedRequest, newCompletionId, prepareTurn, type CompletionContext } from "./completion.js";
import { toApiError } from "./errors.js";
import type { ChatTurnRequest } from "./request.js";
import { LiveActStream } from "./live-act.js";
import { toChoice, usageOf, type ChunkChoice } from "./response.js";

const RESOLVED = Promise.resolve();

/** Settles once `res`'s buffer has drained, or its reader has gone. */
export function responseDrained(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed || res.writableEnded) return RESOLVED;
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/**
 * Server-sent events on a raw response. Nothing is written until the first event, so a request
 * that fails before the model produced anything still gets a plain HTTP error.
 *
 * It respects backpressure: once the response holds its high-water mark (16 KiB, Node's default)
 * unsent, the promise of the next write waits for the client to take it (`drain`) or to go away,
 * and the caller produces nothing more meanwhile (an upstream stream is not read on, so its own
 * sender waits in turn). A reader that stops reading holds the server's buffer under the
 * high-water mark plus the events of one upstream delta.
 */
export class SseWriter {
  #started = false;
  constructor(readonly res: ServerResponse) {}

  get started(): boolean {
    return this.#started;
  }

  /** Write one event; the promise settles once the response can take more. */
  event(data: unknown): Promise<void> {
    return this.write(data) ? RESOLVED : this.drained();
  }

  /** Write one event now, whatever is buffered; false when the caller should wait for `drained()`. */
  write(data: unknown): boolean {
    if (!this.#started) {
      this.#started = true;
      this.res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    }
    if (this.res.destroyed || this.res.writableEnded) return true;
    return this.res.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** Settles once the response's buffer has drained, or the client has gone. */
  drained(): Promise<void> {
    return responseDrained(this.res);
  }

  /** The stream's successful end. */
  done(): void {
    this.res.end("data: [DONE]\n\n");
  }

  /**
   * The stream's end after a failure: the error event, then no `[DONE]`, so no client reads what
   * it got as the whole answer (the `openai` client raises the error).
   */
  fail(body: unknown): void {
    this.write(body);
    this.res.end();
  }
}

/**
 * A streamed completion from a policy that streams (an upstream OpenAI-compatible server, or a
 * local `tiny:`/`onnx:` model): after any rehearsal, the committed turn goes out as it is
 * generated. Without tools, the text is sent as it comes; with tools, `LiveActStream` sends
 * visible text and each tool call as soon as the Act parser's reading of them is settled. Throws,
 * unwritten, what fails before the first event; after it, the failure is sent as an `error` event
 * that ends the stream without `[DONE]`, and thrown too (the caller counts and logs it). An
 * upstream stream cut short (no `finish_reason`) is such a failure. A cancelled request stops the
 * generation and sends nothing more.
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
  /** Writes at once (a local sampler calls on without waiting, and the order must hold); true when the caller should wait. */
  const send = (choice: ChunkChoice): boolean => !sse.write({ ...head, choices: [choice] });
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
        let full = false;
        for (const chunk of chunks) full = send(chunk) || full;
        // An upstream stream is read on only once the client has taken these.
        return full ? sse.drained() : undefined;
      },
      signal,
    );
    const usage = usageOf([generation]);
    context.metrics.completionTokens.inc(usage.completion_tokens);
    // A local sampler ends an aborted generation early and returns what it has: nobody reads the rest.
    signal.throwIfAborted();
    const choice = toChoice(generation, 0, options);
    open();
    for (const chunk of act?.finish(choice, generation.text) ?? [{ index: 0, delta: {}, finish_reason: choice.finish_reason, logprobs: null }]) {
      if (send(chunk)) await sse.drained();
    }
    if (request.includeUsage || envace !== undefined) {
      await sse.event({ ...head, choices: [], ...(request.includeUsage ? { usage } : {}), ...(envace === undefined ? {} : { envace }) });
    }
    sse.done();
  } catch (error) {
    if (sse.started && !signal.aborted) sse.fail(toApiError(error).body);
    throw error;
  }
}
