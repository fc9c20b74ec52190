import type { PyDict, PyValue } from "@envace/python-text";
import { z } from "zod";
import { pyModel, pyOptional } from "./python/schema.js";

// The upstream τ² task format (`tasks.json`) and message format (task histories, saved
// simulations), validated over Python values so that tool arguments keep Python's ints,
// floats and key order.

/** Any JSON value, as Python read it. */
export const PyJson = z.custom<PyValue>(() => true);

/** Keyword arguments of a tool or function call, in the order they were written. */
export const Kwargs = z.custom<PyDict>((value) => value instanceof Map && [...value.keys()].every((key) => typeof key === "string"), {
  error: "expected a JSON object",
});
export type Kwargs = PyDict;

export const Requestor = z.enum(["user", "assistant"]);
export type Requestor = z.infer<typeof Requestor>;

export const Tau2ToolCall = pyModel({
  id: z.string().default(""),
  name: z.string(),
  arguments: Kwargs,
  requestor: Requestor.default("assistant"),
});
export type Tau2ToolCall = z.infer<typeof Tau2ToolCall>;

const Content = pyOptional(z.string());

export const Tau2SystemMessage = z.object({ role: z.literal("system"), content: Content });
export const Tau2AssistantMessage = z.object({
  role: z.literal("assistant"),
  content: Content,
  tool_calls: pyOptional(z.array(Tau2ToolCall)),
});
export const Tau2UserMessage = z.object({
  role: z.literal("user"),
  content: Content,
  tool_calls: pyOptional(z.array(Tau2ToolCall)),
});
export const Tau2ToolMessage = z.object({
  role: z.literal("tool"),
  id: z.string(),
  content: Content,
  requestor: Requestor.default("assistant"),
  error: z.boolean().default(false),
});

/** One message of a τ² conversation; tool results name their call by `id`. */
export const Tau2Message = z.preprocess(
  (value) => (value instanceof Map ? Object.fromEntries(value as PyDict) : value),
  z.discriminatedUnion("role", [Tau2SystemMessage, Tau2AssistantMessage, Tau2UserMessage, Tau2ToolMessage]),
);
export type Tau2Message = z.infer<typeof Tau2Message>;
export type Tau2AssistantMessage = z.infer<typeof Tau2AssistantMessage>;
export type Tau2UserMessage = z.infer<typeof Tau2UserMessage>;
export type Tau2ToolMessage = z.infer<typeof Tau2ToolMessage>;

export const StructuredUserInstructions = pyModel({
  domain: z.string(),
  reason_for_call: z.string(),
  known_info: pyOptional(z.string()),
  unknown_info: pyOptional(z.string()),
  task_instructions: z.string(),
});
export type StructuredUserInstructions = z.infer<typeof StructuredUserInstructions>;

export const UserScenario = pyModel({
  persona: pyOptional(z.string()),
  instructions: z.union([z.string(), StructuredUserInstructions]),
});
export type UserScenario = z.infer<typeof UserScenario>;

export const Description = pyModel({
  purpose: pyOptional(z.string()),
  relevant_policies: pyOptional(z.string()),
  notes: pyOptional(z.string()),
});

/** A gold action: one call of the reference solution. */
export const Action = pyModel({
  action_id: z.string(),
  requestor: Requestor.default("assistant"),
  name: z.string(),
  arguments: Kwargs,
  info: pyOptional(z.string()),
  compare_args: pyOptional(z.array(z.string())),
});
export type Action = z.infer<typeof Action>;

/** A call of any toolkit function (not only agent tools) on the agent or user side. */
export const EnvFunctionCall = pyModel({
  env_type: Requestor,
  func_name: z.string(),
  arguments: Kwargs,
});
export type EnvFunctionCall = z.infer<typeof EnvFunctionCall>;

export const EnvAssertion = pyModel({
  env_type: Requestor,
  func_name: z.string(),
  arguments: Kwargs,
  assert_value: z.boolean().default(true),
  message: pyOptional(z.string()),
});
export type EnvAssertion = z.infer<typeof EnvAssertion>;

export const RewardType = z.enum(["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]);
export type RewardType = z.infer<typeof RewardType>;

export const EvaluationCriteria = pyModel({
  actions: pyOptional(z.array(Action)),
  env_assertions: pyOptional(z.array(EnvAssertion)),
  communicate_info: pyOptional(z.array(z.string())),
  nl_assertions: pyOptional(z.array(z.string())),
  /** Components whose rewards multiply into the task's reward; upstream's default is DB and COMMUNICATE. */
  reward_basis: z.array(RewardType).default(["DB", "COMMUNICATE"]),
});
export type EvaluationCriteria = z.infer<typeof EvaluationCriteria>;

export const InitializationData = pyModel({
  agent_data: pyOptional(Kwargs),
  user_data: pyOptional(Kwargs),
});

export const InitialState = pyModel({
  initialization_data: pyOptional(InitializationData),
  initialization_actions: pyOptional(z.array(EnvFunctionCall)),
  message_history: pyOptional(z.array(Tau2Message)),
});
export type InitialState = z.infer<typeof InitialState>;

/** One τ² task: the user's scenario, the starting state, and how a run is scored. */
export const Tau2Task = pyModel({
  id: z.string(),
  description: pyOptional(Description),
  user_scenario: UserScenario,
  ticket: pyOptional(z.string()),
  initial_state: pyOptional(InitialState),
  evaluation_criteria: pyOptional(EvaluationCriteria),
  /** User tools available to the simulator for this task; null means all of the domain's. */
  user_tools: pyOptional(z.array(z.string())),
});
export type Tau2Task = z.infer<typeof Tau2Task>;

/** The scenario as the user simulator reads it (upstream's `str(UserScenario)`). */
export function renderScenario(scenario: UserScenario): string {
  const lines: string[] = [];
  if (scenario.persona !== null) lines.push("Persona:", indent(scenario.persona));
  lines.push("Instructions:", indent(renderInstructions(scenario.instructions)));
  return lines.join("\n");
}

function renderInstructions(instructions: UserScenario["instructions"]): string {
  if (typeof instructions === "string") return instructions;
  const lines = [`Domain: ${instructions.domain}`, `Reason for call:\n${indent(instructions.reason_for_call)}`];
  if (instructions.known_info !== null) lines.push(`Known info:\n${indent(instructions.known_info)}`);
  if (instructions.unknown_info !== null) lines.push(`Unknown info:\n${indent(instructions.unknown_info)}`);
  lines.push(`Task instructions:\n${indent(instructions.task_instructions)}`);
  return lines.join("\n");
}

// str.splitlines' line boundaries besides "\r" (which "\r\n" extends): \n \v \f \x1c \x1d \x1e \x85 \u2028 \u2029.
const LINE_ENDS = new Set([0x0a, 0x0b, 0x0c, 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029]);

// Python's textwrap.indent(text, "\t"): every line that is not only whitespace gets a tab
// (lines split as str.splitlines(keepends=True) splits them). One pass over the text: task files
// are user input, and a split on a lookbehind pattern costs several times as much per line.
export function indent(text: string): string {
  let out = "";
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x0d) {
      if (text.charCodeAt(i + 1) === 0x0a) i++;
    } else if (!LINE_ENDS.has(code)) continue;
    out += indentLine(text.slice(start, i + 1));
    start = i + 1;
  }
  return start < text.length ? out + indentLine(text.slice(start)) : out;
}

function indentLine(line: string): string {
  return line.trim() === "" ? line : `\t${line}`;
}
