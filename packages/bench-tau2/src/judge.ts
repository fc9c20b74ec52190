import { EnvaceError } from "@envace/errors";
import { ConcurrencyLimit } from "@envace/concurrency";
import { pyDumps } from "@envace/python-text";
import type { RetryOptions } from "@envace/http";
import { callJudge, defaultJudgeRetry, type JudgeSampling } from "@envace/rewards";
import OpenAI from "openai";
import type { NlAssertionJudge, NlAssertionVerdict } from "./evaluate.js";
import type { Tau2Message } from "./task.js";

/** The judge gave no usable verdict for an assertion, even after its retries. */
export class NoVerdictError extends EnvaceError {
  override readonly code = "no-verdict";
}

export interface NlJudgeOptions {
  /** Any OpenAI-compatible server. */
  readonly client: OpenAI;
  readonly model: string;
  /** Default `{ temperature: 0 }`, as upstream judges. */
  readonly sampling?: JudgeSampling;
  readonly retry?: Partial<RetryOptions>;
  /** Per HTTP attempt. Default 120 s. */
  readonly timeoutMs?: number;
  /** Judge calls in flight at once. Default 8. */
  readonly concurrency?: number;
}

/**
 * The NL_ASSERTION judge on `@envace/rewards`' judge client: one structured verdict per
 * assertion (the rewards package's verdict schema), retried on failure. An assertion that
 * still has no verdict makes `judge` reject, which masks the rollout instead of scoring it 0.
 * Upstream asks its judge about all assertions in one free-form call; the verdicts are
 * comparable, the prompts are not identical.
 */
export class NlJudge implements NlAssertionJudge {
  private readonly limiter: ConcurrencyLimit;

  constructor(private readonly options: NlJudgeOptions) {
    this.limiter = new ConcurrencyLimit(options.concurrency ?? 8);
  }

  /** A judge on an OpenAI-compatible server (`baseURL` such as `http://localhost:8000/v1`). */
  static fromServer(baseURL: string, model: string, options: Omit<NlJudgeOptions, "client" | "model"> & { apiKey?: string } = {}): NlJudge {
    const client = new OpenAI({ baseURL, apiKey: options.apiKey ?? "EMPTY" });
    return new NlJudge({ ...options, client, model });
  }

  async judge(conversation: readonly Tau2Message[], assertions: readonly string[], signal?: AbortSignal): Promise<NlAssertionVerdict[]> {
    const transcript = renderConversation(conversation);
    return Promise.all(
      assertions.map((assertion) =>
        this.limiter.run(async () => {
          const result = await callJudge(
            this.options.client,
            { model: this.options.model, prompt: nlAssertionPrompt(transcript, assertion), sampling: this.options.sampling ?? { temperature: 0 } },
            {
              retry: { ...defaultJudgeRetry, ...this.options.retry },
              timeoutMs: this.options.timeoutMs ?? 120_000,
              ...(signal === undefined ? {} : { signal }),
            },
          );
          if (!result.ok) throw new NoVerdictError(`no verdict for "${assertion}": ${result.error}`);
          return { assertion, met: result.verdict.answer, justification: result.verdict.analysis_of_pass_condition };
        }),
      ),
    );
  }
}

/** A conversation as the judge reads it: one line per message, tool calls and results included. */
export function renderConversation(conversation: readonly Tau2Message[]): string {
  const lines: string[] = [];
  for (const message of conversation) {
    if (message.role === "tool") {
      lines.push(`tool result${message.error ? " (error)" : ""}: ${message.content ?? ""}`);
      continue;
    }
    const who = message.role === "assistant" ? "agent" : message.role;
    if (message.content !== null && message.content.trim() !== "") lines.push(`${who}: ${message.content}`);
    if (message.role !== "system") {
      for (const call of message.tool_calls ?? []) lines.push(`${who} calls ${call.name}(${pyDumps(call.arguments)})`);
    }
  }
  return lines.join("\n");
}

/** The judge prompt for one assertion, phrased for the rewards package's verdict schema. */
export function nlAssertionPrompt(transcript: string, assertion: string): string {
  return [
    "You grade a conversation between a customer-service agent and a customer, recorded in a test run.",
    "Decide whether the conversation satisfies one expected outcome.",
    "",
    "Fill in the verdict fields:",
    "- high_level_understanding_of_the_question: what the expected outcome requires, in your own words.",
    "- analysis_of_if_focus_on: which messages and tool calls of the conversation bear on it.",
    "- analysis_of_pass_condition: whether those messages and calls satisfy it, and why.",
    "- analysis_of_failure_examples: how the conversation could have failed it, and whether it did.",
    "- answer: true if the conversation satisfies the expected outcome, false otherwise.",
    "",
    "Expected outcome:",
    assertion,
    "",
    "Conversation:",
    transcript,
  ].join("\n");
}
