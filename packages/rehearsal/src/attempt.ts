import type { JsonObject, Termination, ToolResult, Trajectory } from "@envace/protocol";
import { canonicalJson } from "@envace/records";
import { unreadRehearseEnding } from "@envace/trajectory";

/** One thing that happened in a private rehearsal attempt, in order. */
export type AttemptEvent =
  /**
   * A tool call and its rehearsed result. `source`: predicted by the policy, refused by the call
   * validator, or `unreadable`: the policy's Rehearse output could not be read as a result (the
   * attempt ended there), so nothing was predicted and `result` only carries the parse error.
   */
  | { kind: "call"; name: string; arguments: JsonObject; result: ToolResult; source: "model" | "validator" | "unreadable" }
  /** A reply of the agent to the user (no tool call). */
  | { kind: "reply"; text: string }
  /** A user turn replayed or simulated during the attempt. */
  | { kind: "user"; text: string }
  /** A simulated user's call on its own side (dual control: its phone), with the rehearsed result. */
  | { kind: "user_call"; name: string; arguments: JsonObject; result: ToolResult };

/** What a rehearsal attempt did, without its generations: the material for reflection and memory. */
export interface AttemptDigest {
  /** 0-based attempt index. */
  index: number;
  events: AttemptEvent[];
  termination: Termination;
}

/** The digest of a self-unfolded attempt. */
export function digestAttempt(trajectory: Trajectory, index: number): AttemptDigest {
  const events: AttemptEvent[] = [];
  const lastOutcome = trajectory.steps.findLast((step) => step.type === "act")?.outcomes.at(-1);
  for (const step of trajectory.steps) {
    if (step.type === "user") {
      for (const action of step.actions ?? []) {
        for (const outcome of action.outcomes)
          events.push({ kind: "user_call", name: outcome.call.name, arguments: outcome.call.arguments, result: outcome.result });
      }
      events.push({ kind: "user", text: step.message.content });
      continue;
    }
    for (const outcome of step.outcomes) {
      const source =
        outcome.provenance === "rehearsed" && outcome.generation === undefined
          ? "validator"
          : outcome === lastOutcome && unreadRehearseEnding(trajectory.termination) !== undefined
            ? "unreadable"
            : "model";
      events.push({ kind: "call", name: outcome.call.name, arguments: outcome.call.arguments, result: outcome.result, source });
    }
    const content = step.message.content ?? "";
    if (step.outcomes.length === 0 && content.trim().length > 0) events.push({ kind: "reply", text: content.trim() });
  }
  return { index, events, termination: trajectory.termination };
}

/** A call as one line: `buy {"item":"rabo","qty":2,"user":"ada"}` (arguments in canonical JSON). */
export function callText(name: string, args: JsonObject): string {
  return `${name} ${canonicalJson(args)}`;
}

/** A result as one line: its JSON, or `error CODE: message`. */
export function resultText(result: ToolResult): string {
  return result.status === "ok" ? JSON.stringify(result.content) : `error ${result.error.code}: ${result.error.message}`;
}

/** How an attempt ended, in words. */
export function terminationText(termination: Termination): string {
  switch (termination.reason) {
    case "agent_stop":
      return "the agent finished";
    case "user_stop":
      return "the user ended the conversation";
    case "max_turns":
      return `stopped after ${termination.limit} turns`;
    case "max_tokens":
      return `stopped at a token limit${termination.detail === undefined ? "" : ` (${termination.detail})`}`;
    case "parse_error":
      return `the agent's output was malformed (${termination.code})`;
    case "tool_error":
      return `stopped after ${termination.count} tool errors`;
    case "env_error":
      return `a tool result could not be produced (${termination.code})`;
  }
}

/**
 * An attempt as numbered lines: each call with its predicted result, each reply and user turn,
 * then how it ended. Results longer than `maxResultChars` are cut.
 */
export function renderAttempt(digest: AttemptDigest, options: { maxResultChars?: number } = {}): string {
  const limit = options.maxResultChars ?? Number.POSITIVE_INFINITY;
  const lines = digest.events.map((event, i) => {
    const n = `${i + 1}.`;
    switch (event.kind) {
      case "call": {
        const result = event.source === "unreadable" ? "no prediction (the result could not be read)" : resultText(event.result);
        const shown = result.length > limit ? `${result.slice(0, Math.max(0, limit - 1))}…` : result;
        return `${n} ${callText(event.name, event.arguments)} → ${shown}`;
      }
      case "reply":
        return `${n} reply: ${event.text}`;
      case "user":
        return `${n} user: ${event.text}`;
      case "user_call": {
        const result = resultText(event.result);
        const shown = result.length > limit ? `${result.slice(0, Math.max(0, limit - 1))}…` : result;
        return `${n} user, on their own device: ${callText(event.name, event.arguments)} → ${shown}`;
      }
    }
  });
  lines.push(`ended: ${terminationText(digest.termination)}`);
  return lines.join("\n");
}

/** A call the rehearsal predicted to fail, merged over attempts. */
export interface PredictedFailure {
  name: string;
  arguments: JsonObject;
  /** The first predicted error. */
  code: string;
  message: string;
  /** Whether the tool changes the world (see `RehearseOptions.writeTools`). */
  write: boolean;
  /** `model`: the policy predicted the error; `validator`: the call was refused before the model was asked. */
  source: "model" | "validator";
  /** Attempts (0-based) in which the call was predicted to fail, and in which the same call was predicted to succeed. */
  failedIn: number[];
  succeededIn: number[];
}

/** The identity of a call for matching: tool name and canonical arguments. */
export function callKey(name: string, args: JsonObject): string {
  return `${name} ${canonicalJson(args)}`;
}

/**
 * Every distinct call predicted to fail in any attempt, in order of first appearance, with the
 * attempts where it failed and where the same call was predicted to succeed. A call whose
 * prediction could not be read was predicted neither way: a malformed Rehearse output says
 * nothing about the call, and taking it for a failure would warn the real run off a call that
 * may well be right.
 */
export function predictedFailures(digests: readonly AttemptDigest[], isWrite: (tool: string) => boolean): PredictedFailure[] {
  const failures = new Map<string, PredictedFailure>();
  const successes = new Map<string, Set<number>>();
  for (const digest of digests) {
    for (const event of digest.events) {
      if (event.kind !== "call" || event.source === "unreadable") continue;
      const key = callKey(event.name, event.arguments);
      if (event.result.status === "ok") {
        const set = successes.get(key) ?? new Set<number>();
        set.add(digest.index);
        successes.set(key, set);
        continue;
      }
      const known = failures.get(key);
      if (known !== undefined) {
        if (!known.failedIn.includes(digest.index)) known.failedIn.push(digest.index);
        continue;
      }
      failures.set(key, {
        name: event.name,
        arguments: event.arguments,
        code: event.result.error.code,
        message: event.result.error.message,
        write: isWrite(event.name),
        source: event.source === "validator" ? "validator" : "model",
        failedIn: [digest.index],
        succeededIn: [],
      });
    }
  }
  for (const [key, failure] of failures) failure.succeededIn = [...(successes.get(key) ?? [])].sort((a, b) => a - b);
  return [...failures.values()];
}
