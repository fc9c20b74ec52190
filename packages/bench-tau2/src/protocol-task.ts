import type { JsonObject, Message, Task } from "@envace/protocol";
import { toJson } from "@envace/python-text";
import { agentSystemPrompt, agentView } from "./conversation.js";
import { userToolSpecs } from "./environment.js";
import type { Tau2Domain } from "./load.js";
import { renderScenario, type Tau2Task } from "./task.js";

/**
 * A τ² task as a protocol `Task`, for the parts of the project that speak the protocol (the
 * rollout engine, the rewards package): the agent's system prompt and any message history as
 * the starting context, the agent's tools, the gold actions, and in `metadata` what the τ²
 * evaluators read (`reward_basis`, `communicate_info`, `nl_assertions`) and the user's scenario
 * (`user_scenario`, as the user simulator reads it), and in dual-control domains the user's
 * tools (`user_tools`). `Tau2Environment.reset` accepts it.
 */
export function toProtocolTask(domain: Tau2Domain, task: Tau2Task, options: { agentInstruction?: string } = {}): Task {
  const criteria = task.evaluation_criteria;
  const history = task.initial_state?.message_history ?? [];
  const messages: Message[] = agentView(agentSystemPrompt(domain.policy, options.agentInstruction), history);
  const metadata: JsonObject = {
    benchmark: "tau2",
    domain: domain.definition.name,
    user_scenario: renderScenario(task.user_scenario),
    reward_basis: criteria?.reward_basis ?? [],
    communicate_info: criteria?.communicate_info ?? [],
    nl_assertions: criteria?.nl_assertions ?? [],
  };
  // Dual control: the user's own tools, for a simulated user (and its rehearsal) in the rollout engine.
  const userTools = userToolSpecs(domain.definition, task.user_tools);
  if (userTools.length > 0) metadata.user_tools = userTools;
  return {
    id: task.id,
    messages,
    tools: domain.definition.agent.toolkit.specs(),
    goldActions: (criteria?.actions ?? [])
      .filter((action) => action.requestor === "assistant")
      .map((action) => ({ id: action.action_id, name: action.name, arguments: toJson(action.arguments) as JsonObject })),
    metadata,
  };
}
