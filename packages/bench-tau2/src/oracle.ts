import type { GenerateRequest, Generation, Policy, WireToolCall } from "@envace/protocol";
import { pyDumps } from "@envace/python-text";
import type { Action, Requestor, Tau2Task } from "./task.js";

/** The agent and the user of an oracle run: together they play a task's gold actions. */
export interface OraclePair {
  readonly agent: Policy;
  readonly user: Policy;
}

/**
 * An oracle for one task: a self-test of the harness. The agent plays the gold actions the
 * agent owns, one call per turn, and the user plays the user's; whoever does not own the next
 * action hands the turn over with a short message. When every action has been played the user
 * writes `###STOP###`. Run through the evaluator, an oracle conversation reaches exactly the
 * gold database: its DB component scores 1 on every task.
 */
export function oracle(task: Tau2Task): OraclePair {
  const actions = task.evaluation_criteria?.actions ?? [];
  let next = 0;
  const turn = (role: Requestor, request: GenerateRequest): Generation => {
    const action = actions[next];
    if (action?.requestor === role) {
      next++;
      return scriptedGeneration(request, "", [oracleCall(action)]);
    }
    if (role === "user") return scriptedGeneration(request, action === undefined ? "###STOP###" : "Please go ahead.");
    return scriptedGeneration(request, action === undefined ? "Everything is done." : "Please do the next step on your side.");
  };
  return {
    agent: { id: "oracle", generate: (request) => Promise.resolve(turn("assistant", request)) },
    user: { id: "oracle-user", generate: (request) => Promise.resolve(turn("user", request)) },
  };
}

/** A gold action as the wire call that plays it. */
export function oracleCall(action: Action): WireToolCall {
  return { id: action.action_id, type: "function", function: { name: action.name, arguments: pyDumps(action.arguments) } };
}

/** A scripted generation: `text`, and the calls when there are some. */
export function scriptedGeneration(request: GenerateRequest, text: string, toolCalls?: WireToolCall[]): Generation {
  return {
    role: request.role,
    text,
    ...(toolCalls === undefined ? {} : { toolCalls }),
    promptTokens: [],
    outputTokens: [],
    logprobs: null,
    finishReason: toolCalls === undefined ? "stop" : "tool_calls",
  };
}
