import type { JsonObject, Task } from "@envace/protocol";
import { DOMAIN_TOOLS, toolSpec } from "./environment.js";
import { strptime } from "./python.js";
import type { VitaTask } from "./task.js";

/** Upstream's English agent system prompt (`prompts/agent_system_prompt.yaml`); `{time}` is the task's time and weekday. */
export const AGENT_SYSTEM_PROMPT = `# Environment
- Current time: {time}

# Tool Usage Guidelines:
- When the user's needs require using tools to complete, first determine whether all parameter information is known. If it is known, extract the corresponding parameters, otherwise ask the user for the relevant parameter values
- When the user cannot provide relevant information, first obtain relevant information through tools
- Complete tasks based on Precondition and Postcondition

# Conversation Guidelines
- Only use information from the above context, prohibit constructing information without basis and replying to users
- Focus on completing user needs, prohibit divergent guidance to users to propose new needs
- After completing the user's task requirements, ask if there are any other needs. If the user indicates no, generate '###STOP###' mark to end the conversation`;

/** What ends a conversation, from either side. */
export const STOP_MARKER = "###STOP###";

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** The agent's current time as upstream writes it: `2025-06-21 11:20:00 Saturday`. */
export function agentTime(time: string): string {
  const parsed = strptime(time, "%Y-%m-%d %H:%M:%S");
  if (parsed === undefined) return time;
  return `${time} ${WEEKDAYS[new Date(Date.UTC(parsed.year, parsed.month - 1, parsed.day)).getUTCDay()]!}`;
}

/** The agent's system prompt for a task. */
export function agentSystemPrompt(task: VitaTask): string {
  return AGENT_SYSTEM_PROMPT.replace("{time}", () => agentTime(task.time));
}

/**
 * A VitaBench task as a protocol `Task`: the agent's system prompt as the starting context, the
 * domain's tools, and in `metadata` what the user simulator and the evaluator read.
 */
export function toProtocolTask(task: VitaTask): Task {
  const criteria = task.criteria;
  return {
    id: task.id,
    messages: [{ role: "system", content: agentSystemPrompt(task) }],
    tools: [...DOMAIN_TOOLS[task.domain].values()].map(toolSpec),
    metadata: {
      benchmark: "vita",
      domain: task.domain,
      time: task.time,
      user_profile: task.userProfile as JsonObject,
      overall_rubrics: criteria?.overall_rubrics ?? [],
      state_rubrics: (criteria?.expected_states ?? []).flatMap((state) => state.state_rubrics ?? []),
    },
  };
}
