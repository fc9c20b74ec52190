import { SamplingParams, type Generation, type Policy, type SamplingParamsInput, type ToolSpec } from "@envace/protocol";
import { agentSystemPrompt, agentView, FIRST_AGENT_MESSAGE, isUserStop, parseTurn, userSystemPrompt, userView } from "./conversation.js";
import { MessageHistoryError, type Tau2Environment } from "./environment.js";
import type { Tau2Termination } from "./evaluate.js";
import type { UserGuidelines } from "./load.js";
import { SOLO_STOP_SPEC, soloStop, soloSystemPrompt } from "./solo.js";
import { renderScenario, type Tau2Message, type Tau2Task, type Tau2ToolCall } from "./task.js";

/** Upstream's defaults: 200 steps (each message is one), 10 tool errors. */
export const DEFAULT_MAX_STEPS = 200;
export const DEFAULT_MAX_ERRORS = 10;

export interface SimulateOptions {
  /** A fresh environment of the task's domain; it is reset to the task first. */
  readonly environment: Tau2Environment;
  readonly task: Tau2Task;
  /** The agent: a policy in the `act` role. */
  readonly agent: Policy;
  /** The user simulator: a policy in the `user` role. Unused in solo mode (the environment's). */
  readonly user: Policy;
  /** The user simulator's guidelines (`user_simulator/*.md`). */
  readonly guidelines: UserGuidelines;
  /**
   * Replace the paraphrased agent instructions around the policy (e.g. with upstream's text);
   * in solo mode, the solo instructions.
   */
  readonly agentInstruction?: string;
  readonly sampling?: { readonly agent?: SamplingParamsInput; readonly user?: SamplingParamsInput };
  readonly maxSteps?: number;
  readonly maxErrors?: number;
  readonly id?: string;
  readonly trial?: number;
  readonly signal?: AbortSignal;
  /** Called with each message as it joins the conversation. */
  readonly onMessage?: (message: Tau2Message) => void;
}

/** One conversation, in upstream's shape (`SimulationRun`): re-scorable here and upstream. */
export interface Tau2Simulation {
  readonly id: string;
  readonly task_id: string;
  readonly trial: number;
  readonly termination_reason: Tau2Termination;
  /** The whole conversation, starting with the task's message history if it has one. */
  readonly messages: Tau2Message[];
  /** What went wrong, for `agent_error`, `user_error` and `infrastructure_error`. */
  readonly error?: string;
  /** Every generation of the agent and the user, in order. */
  readonly generations: Generation[];
  /** The environment's final `get_db_hash()`. */
  readonly db_hash: string;
  /** The final `get_user_db_hash()` (null for domains without a user side); not in upstream's record. */
  readonly user_db_hash: string | null;
}

type Party = "agent" | "user" | "env";

/**
 * Run one τ² conversation the way upstream's half-duplex orchestrator does: the agent greets,
 * then agent, user and environment take turns; a participant's tool calls go to the
 * environment and the results come back to that participant. It ends when the user writes a
 * stop marker, after `maxSteps` messages, after `maxErrors` tool errors, or when an output is
 * malformed (`agent_error`, `user_error`) or a policy fails (`infrastructure_error`).
 *
 * In solo mode (the environment's) there is no user: the agent starts, sees the ticket in its
 * system prompt and the tools of both sides plus `done`, and may only call tools. Calling `done`
 * ends the conversation (`agent_stop`); a message without a call is an `agent_error`.
 */
export async function simulate(options: SimulateOptions): Promise<Tau2Simulation> {
  const { environment, task, signal } = options;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const maxErrors = options.maxErrors ?? DEFAULT_MAX_ERRORS;
  const agentSampling = SamplingParams.parse(options.sampling?.agent ?? {});
  const userSampling = SamplingParams.parse(options.sampling?.user ?? {});
  environment.resetTo(task);

  const solo = environment.solo;
  const agentTools: ToolSpec[] = solo ? [...environment.tools(), SOLO_STOP_SPEC] : [...environment.tools()];
  const userTools = environment.userTools(task.user_tools);
  const agentPrompt = solo
    ? soloSystemPrompt(environment.policy, task.ticket, options.agentInstruction)
    : agentSystemPrompt(environment.policy, options.agentInstruction);
  const userPrompt = userSystemPrompt(userTools.length > 0 ? options.guidelines.tools : options.guidelines.plain, renderScenario(task.user_scenario));

  const messages: Tau2Message[] = [];
  const generations: Generation[] = [];
  const add = (message: Tau2Message): void => {
    messages.push(message);
    options.onMessage?.(message);
  };
  const finish = (termination: Tau2Termination, error?: string): Tau2Simulation => ({
    id: options.id ?? `${task.id}/${options.trial ?? 0}`,
    task_id: task.id,
    trial: options.trial ?? 0,
    termination_reason: termination,
    messages,
    ...(error === undefined ? {} : { error }),
    generations,
    db_hash: environment.dbHash(),
    user_db_hash: environment.userDbHash(),
  });

  let from: Party;
  let to: Party;
  let pending: readonly Tau2ToolCall[] = [];
  const history = task.initial_state?.message_history ?? [];
  if (history.length === 0 && solo) {
    // No greeting: the agent's first turn opens the conversation.
    from = "env";
    to = "agent";
  } else if (history.length === 0) {
    add({ role: "assistant", content: FIRST_AGENT_MESSAGE, tool_calls: null });
    from = "agent";
    to = "user";
  } else {
    for (const message of history) add(message);
    const last = history[history.length - 1]!;
    if (last.role === "assistant" || last.role === "user") {
      from = last.role === "assistant" ? "agent" : "user";
      to = last.tool_calls !== null ? "env" : from === "agent" ? "user" : "agent";
      pending = last.tool_calls ?? [];
      if (last.role === "user" && isUserStop(last)) return finish("user_stop");
    } else if (last.role === "tool") {
      from = "env";
      to = last.requestor === "assistant" ? "agent" : "user";
    } else {
      throw new MessageHistoryError(`task ${task.id}: a message history must end with a user, assistant or tool message`);
    }
  }

  let steps = 0;
  let errors = 0;
  let ended: Tau2Termination | undefined;
  const callIds = { next: 0 };
  const callId = (): string => `call_${++callIds.next}`;

  while (ended === undefined) {
    signal?.throwIfAborted();
    if (to === "env") {
      for (const call of pending) {
        const response = environment.respond(call);
        if (response.error) errors++;
        add({ role: "tool", id: response.id, content: response.content, requestor: response.requestor, error: response.error });
      }
      to = from;
      from = "env";
    } else if (to === "user") {
      let generation: Generation;
      try {
        generation = await options.user.generate({ role: "user", messages: userView(userPrompt, messages), tools: userTools, sampling: userSampling }, signal);
      } catch (error) {
        if (signal?.aborted === true) throw error;
        return finish("infrastructure_error", `user simulator: ${(error as Error).message}`);
      }
      generations.push(generation);
      const parsed = parseTurn(generation, "user", callId);
      if (!parsed.ok) return finish("user_error", parsed.detail);
      add(parsed.message);
      if (isUserStop(parsed.message)) ended = "user_stop";
      from = "user";
      to = parsed.message.tool_calls !== null ? "env" : "agent";
      pending = parsed.message.tool_calls ?? [];
    } else {
      let generation: Generation;
      try {
        generation = await options.agent.generate(
          { role: "act", messages: agentView(agentPrompt, messages), tools: agentTools, sampling: agentSampling },
          signal,
        );
      } catch (error) {
        if (signal?.aborted === true) throw error;
        return finish("infrastructure_error", `agent: ${(error as Error).message}`);
      }
      generations.push(generation);
      const parsed = parseTurn(generation, "assistant", callId);
      if (!parsed.ok) return finish("agent_error", parsed.detail);
      const stop = solo ? soloStop(parsed.message) : undefined;
      const message = stop ?? parsed.message;
      add(message);
      if (stop !== undefined) ended = "agent_stop";
      else if (solo && message.tool_calls === null) return finish("agent_error", "solo mode: the agent may only call tools");
      from = "agent";
      to = message.tool_calls !== null ? "env" : "user";
      pending = message.tool_calls ?? [];
    }
    steps++;
    // As upstream: no limit is checked while a tool call waits for its result, and the
    // limits override a stop reached on the same step.
    if (to !== "env") {
      if (steps >= maxSteps) ended = "max_steps";
      if (errors >= maxErrors) ended = "too_many_errors";
    }
  }
  return finish(ended);
}
