import { EnvaceError } from "@envace/errors";
import type { JsonObject } from "@envace/protocol";
import { z } from "zod";

/** The judge's structured answer about one checklist item at one step. */
export const JudgeVerdict = z.object({
  high_level_understanding_of_the_question: z.string(),
  analysis_of_if_focus_on: z.string(),
  analysis_of_pass_condition: z.string(),
  analysis_of_failure_examples: z.string(),
  answer: z.boolean(),
});
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

/** An OpenAI `response_format` that holds a judge to a JSON schema (strict: no other shape is accepted). */
export interface JsonSchemaResponseFormat {
  type: "json_schema";
  json_schema: { name: string; strict: true; schema: JsonObject };
}

/** The strict `response_format` named `name` whose answers follow `schema`. */
export function strictJsonSchema(name: string, schema: JsonObject): JsonSchemaResponseFormat {
  return { type: "json_schema", json_schema: { name, strict: true, schema } };
}

/** The strict JSON-schema `response_format` the judge is asked to follow. */
export const JUDGE_RESPONSE_FORMAT = strictJsonSchema("evaluation_verdict", {
  type: "object",
  title: "Checklist evaluation verdict",
  description: "Whether the messages under evaluation satisfy one checklist item.",
  properties: {
    high_level_understanding_of_the_question: { type: "string" },
    analysis_of_if_focus_on: { type: "string" },
    analysis_of_pass_condition: { type: "string" },
    analysis_of_failure_examples: { type: "string" },
    answer: { type: "boolean" },
  },
  required: ["high_level_understanding_of_the_question", "analysis_of_if_focus_on", "analysis_of_pass_condition", "analysis_of_failure_examples", "answer"],
  additionalProperties: false,
});

/** Why a judge reply could not be used. */
export class VerdictParseError extends EnvaceError {
  override readonly code = "verdict-parse";
  override readonly name = "VerdictParseError";
}

/**
 * Read a verdict from the judge's message content. A leading `<think>…</think>` block and a
 * Markdown code fence are tolerated (some servers add them despite the schema); anything else that
 * is not JSON, or JSON that violates the schema, throws `VerdictParseError`.
 */
export function parseVerdict(content: string | null | undefined): JudgeVerdict {
  if (content === null || content === undefined || content.trim() === "") throw new VerdictParseError("empty judge reply");
  let text = content.trim();
  const thinkEnd = text.lastIndexOf("</think>");
  if (thinkEnd !== -1) text = text.slice(thinkEnd + "</think>".length).trim();
  text = unfenced(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new VerdictParseError(`judge reply is not JSON (${(error as Error).message}): ${preview(content)}`);
  }
  const result = JudgeVerdict.safeParse(value);
  if (!result.success) {
    const fields = result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ");
    throw new VerdictParseError(`judge reply violates the verdict schema (${fields}): ${preview(content)}`);
  }
  return result.data;
}

/**
 * The inside of a Markdown code fence around the whole (trimmed) reply, trimmed: what
 * `/^```(?:json)?\s*([\s\S]*?)\s*```$/` captures, without its backtracking (a fence that opens
 * and never closes, followed by a long run of spaces, took that pattern minutes).
 */
export function unfenced(text: string): string {
  if (text.length < 6 || !text.startsWith("```") || !text.endsWith("```")) return text;
  return text.slice(text.startsWith("```json") ? 7 : 3, -3).trim();
}

function preview(text: string): string {
  return text.length > 200 ? `${JSON.stringify(text.slice(0, 200))}…` : JSON.stringify(text);
}
