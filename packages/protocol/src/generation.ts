import { z } from "zod";
import { WireToolCall } from "./message.js";
import { Role } from "./role.js";

/** Why a generation stopped. `length` means it hit its token limit. */
export const FinishReason = z.enum(["stop", "length", "tool_calls", "abort", "error"]);
export type FinishReason = z.infer<typeof FinishReason>;

/**
 * One policy output, tagged with the role it was generated in. Each generation of the policy
 * is one training row: the prompt and output token ids, and the sampler's log-probability of
 * every output token. Backends that cannot return token data leave the arrays empty and
 * `logprobs` null; training then refuses the row with a clear message.
 */
export const Generation = z
  .object({
    role: Role,
    text: z.string(),
    reasoning: z.string().optional(),
    /** Native tool calls from an OpenAI-compatible server, when it parsed them itself. */
    toolCalls: z.array(WireToolCall).optional(),
    promptTokens: z.array(z.number().int().nonnegative()),
    outputTokens: z.array(z.number().int().nonnegative()),
    logprobs: z.array(z.number()).nullable(),
    finishReason: FinishReason,
    /**
     * Token counts as the model server reported them (its `usage`), where it returned no token
     * ids. Several choices of one request carry the same counts: the request's.
     */
    usage: z.object({ promptTokens: z.number().int().nonnegative(), completionTokens: z.number().int().nonnegative() }).optional(),
  })
  .refine((g) => g.logprobs === null || g.logprobs.length === g.outputTokens.length, {
    error: "logprobs must have one entry per output token",
    path: ["logprobs"],
  });
export type Generation = z.infer<typeof Generation>;
