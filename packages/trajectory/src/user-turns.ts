import type { AssistantMessage, Message, Policy, SamplingParams, Step, Task, UserAction, UserStep } from "@envace/protocol";
import { parseActOutput } from "./act-parser.js";
import { toolMessage } from "./messages.js";
import type { UserDevice } from "./user-device.js";

/** What a user-turn source sees when the agent has ended its turn. */
export interface UserTurnContext {
  task: Task;
  /** The whole conversation so far, ending with the agent's reply. */
  messages: readonly Message[];
  /** The steps of the rollout so far. */
  steps: readonly Step[];
  /** Sampling for a simulated user. */
  sampling: SamplingParams;
  signal?: AbortSignal | undefined;
  /** The user's own side (dual control), when the rollout has one: its tools and who answers them. */
  device?: UserDevice | undefined;
}

export type UserTurn =
  /** The conversation goes on with this user message. */
  | { kind: "message"; step: UserStep }
  /** The user ended the conversation (a simulator's stop marker); `step` is the user's last message. */
  | { kind: "stop"; step: UserStep; marker: string }
  /**
   * No further user turn: the rollout ends with `agent_stop`. With `masked`, whether a further
   * turn was due could not be decided (the gate's judge failed): the rollout cannot be scored
   * honestly and its reward is masked with this reason, never scored.
   */
  | { kind: "end"; masked?: string };

/** Where the user's next message comes from once the agent replies. */
export interface UserTurnSource {
  next(context: UserTurnContext): Promise<UserTurn>;
}

/** No user turns after the first: the agent's first reply ends the rollout. */
export const singleTurn: UserTurnSource = { next: () => Promise.resolve({ kind: "end" }) };

export interface ReplayOptions {
  /**
   * Decides whether the next reference user turn is replayed, e.g. CM2's rule that every
   * `required_for_next_turn` checklist item of the finished turn passed. Default: always.
   */
  gate?: (context: UserTurnContext) => GateDecision | Promise<GateDecision>;
}

/** A gate's answer: replay the next turn or not, or `{ masked }` when it could not decide. */
export type GateDecision = boolean | { masked: string };

/**
 * Replays the later user turns of the task's reference dialogue (CM2 style): after the agent's
 * n-th reply, the reference's next user message that is not already in the starting context.
 */
export function replayReference(options: ReplayOptions = {}): UserTurnSource {
  return {
    async next(context) {
      const reference = context.task.reference ?? [];
      const initial = context.task.messages.filter((m) => m.role === "user").length;
      const replayed = context.steps.filter((s) => s.type === "user").length;
      const next = reference.filter((m) => m.role === "user")[initial + replayed];
      if (next?.role !== "user") return { kind: "end" };
      if (options.gate !== undefined) {
        const decision = await options.gate(context);
        if (typeof decision === "object") return { kind: "end", masked: decision.masked };
        if (!decision) return { kind: "end" };
      }
      return { kind: "message", step: { type: "user", source: "replay", message: { role: "user", content: next.content } } };
    },
  };
}

/** τ²-Bench's user-simulator stop markers: goal reached, transfer to a human, out of scope. */
export const TAU2_STOP_MARKERS = ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"] as const;

export interface UserSimulatorOptions {
  /** The model playing the user (role `user`; its generations are not training rows). */
  policy: Policy;
  /** The user's instructions (system message). Default: `DEFAULT_USER_INSTRUCTIONS`. */
  instructions?: string;
  /**
   * The scenario the simulated user pursues. Default: `task.metadata.user_scenario` (a string,
   * or JSON shown as text), else the task's first user message.
   */
  scenario?: (task: Task) => string;
  /** Markers that end the conversation when the simulator writes them. Default τ²-Bench's. */
  stopMarkers?: readonly string[];
  /**
   * With a user device (dual control): the most rounds of tool calls the user may make before its
   * message in one turn; a generation past it counts as the message. Default 10.
   */
  maxToolRounds?: number;
}

export const DEFAULT_USER_INSTRUCTIONS = `You play a user talking to a customer-service agent. Pursue the scenario below one step at a time, in your own words, revealing only what the agent needs at that point. Never invent facts the scenario does not give; say you do not know instead. You are the user, not the agent: do not solve the task yourself.

When your goal is reached, or it cannot be reached, write ###STOP### on its own. If you are transferred to a human, write ###TRANSFER###. If the agent asks for something outside the scenario, write ###OUT-OF-SCOPE###.`;

/**
 * A model plays the user (τ²-Bench / VitaBench style). It sees the conversation from the user's
 * side: the agent's visible replies as the other party's turns, its own earlier messages as its
 * own; the agent's tool traffic and reasoning are hidden. When the rollout gives the user a side
 * of its own (`UserTurnContext.device`), the simulator is offered its tools; its calls run there
 * (round after round, results shown only to it) until it writes its message, and the step
 * records them as `actions`.
 */
export function simulateUser(options: UserSimulatorOptions): UserTurnSource {
  const stopMarkers = options.stopMarkers ?? TAU2_STOP_MARKERS;
  const maxToolRounds = options.maxToolRounds ?? 10;
  return {
    async next(context) {
      const messages = userSimulatorPrompt(context.task, context.messages, options);
      const device = context.device !== undefined && context.device.tools.length > 0 ? context.device : undefined;
      const tools = device?.tools ?? [];
      const actions: UserAction[] = [];
      let generation = await options.policy.generate({ role: "user", messages, tools: [...tools], sampling: context.sampling }, context.signal);
      for (let round = 0; device !== undefined && round < maxToolRounds; round += 1) {
        const parsed = parseActOutput(generation, { tools: [...tools], callId: (index) => `user_call_${context.steps.length}_${round}_${index}` });
        if (parsed.kind !== "tool_calls") break;
        const latestAct: AssistantMessage = parsed.message;
        const outcomes = [];
        for (const [index, call] of parsed.calls.entries()) outcomes.push(await device.answer(call, { history: messages, latestAct, round, index }));
        actions.push({ generation, outcomes });
        messages.push(latestAct, ...outcomes.map((outcome) => toolMessage(outcome.result)));
        generation = await options.policy.generate({ role: "user", messages, tools: [...tools], sampling: context.sampling }, context.signal);
      }
      const content = generation.text.trim();
      const step: UserStep = { type: "user", source: "simulator", message: { role: "user", content }, generation, ...(actions.length > 0 ? { actions } : {}) };
      const marker = stopMarkers.find((m) => content.includes(m));
      return marker === undefined ? { kind: "message", step } : { kind: "stop", step, marker };
    },
  };
}

/** The user simulator's prompt: its instructions and scenario, then the dialogue with roles swapped. */
export function userSimulatorPrompt(
  task: Task,
  conversation: readonly Message[],
  options: Pick<UserSimulatorOptions, "instructions" | "scenario"> = {},
): Message[] {
  const scenario = (options.scenario ?? defaultScenario)(task);
  const messages: Message[] = [{ role: "system", content: `${options.instructions ?? DEFAULT_USER_INSTRUCTIONS}\n\n## Scenario\n${scenario}` }];
  for (const message of conversation) {
    if (message.role === "user") messages.push({ role: "assistant", content: message.content });
    else if (message.role === "assistant" && message.content !== null && message.content.trim().length > 0) {
      messages.push({ role: "user", content: message.content });
    }
  }
  return messages;
}

function defaultScenario(task: Task): string {
  const scenario = task.metadata.user_scenario;
  if (typeof scenario === "string") return scenario;
  if (scenario !== undefined) return JSON.stringify(scenario, null, 2);
  const first = task.messages.find((m) => m.role === "user");
  return first?.role === "user" ? `You opened the conversation with: "${first.content}". Keep pursuing that goal.` : "Ask the agent for help.";
}
