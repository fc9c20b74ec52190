import { TaskContentError, type JsonObject, type JsonValue, type Task, type ToolCall, type Trajectory } from "@envace/protocol";
import { type RewardFunction, scored } from "../reward.js";
import { structuralEqual } from "../structural-equal.js";

/** An expected action: a tool call a correct solution makes, compared on `compare_args` only when given. */
export interface GoldAction {
  name: string;
  arguments: JsonObject;
  /** The argument names to compare; `null`/absent compares the arguments the call gave (as τ²-bench does). */
  compare_args?: readonly string[] | null;
}

/**
 * Whether a tool call performs a gold action, by τ²-bench's rule: the names are equal, and the
 * two argument objects restricted to the compared names are equal. Without `compare_args` the
 * compared names are the call's own argument names: an argument the call gave must agree with
 * the gold one, and one the call left out is not compared (upstream behaves so). An empty list
 * compares nothing. Values compare as Python's `==` does on decoded JSON (`1 == 1.0 == true`).
 */
export function actionMatches(gold: GoldAction, call: Pick<ToolCall, "name" | "arguments">): boolean {
  if (gold.name !== call.name) return false;
  const names = new Set(gold.compare_args ?? Object.keys(call.arguments));
  if (names.size === 0) return true;
  return pythonEqual(restrict(call.arguments, names), restrict(gold.arguments, names));
}

function restrict(args: JsonObject, names: ReadonlySet<string>): JsonObject {
  return Object.fromEntries(Object.entries(args).filter(([key]) => names.has(key)));
}

/** Python's `==` on values decoded from JSON: numbers and booleans compare by value, containers structurally. */
export function pythonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  const numeric = (v: JsonValue | undefined) => (typeof v === "boolean" ? Number(v) : v);
  return structuralEqual(a, b, (x, y) => numeric(x) === numeric(y));
}

/** Every tool call the agent made, in order. Calls the environment rejected count: they were made. */
export function agentToolCalls(trajectory: Trajectory): ToolCall[] {
  return trajectory.steps.flatMap((step) => {
    if (step.type !== "act") return [];
    if (step.outcomes.length > 0) return step.outcomes.map((outcome) => outcome.call);
    return (step.message.tool_calls ?? []).flatMap((wire) => {
      const args = decodeObject(wire.function.arguments);
      return args ? [{ id: wire.id, name: wire.function.name, arguments: args }] : [];
    });
  });
}

function decodeObject(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

export interface ActionCheck {
  action: GoldAction;
  matched: boolean;
}

/** For each gold action, whether some call performs it (one call may perform several). */
export function checkActions(gold: readonly GoldAction[], calls: readonly Pick<ToolCall, "name" | "arguments">[]): ActionCheck[] {
  return gold.map((action) => ({ action, matched: calls.some((call) => actionMatches(action, call)) }));
}

export interface ActionMatchOptions {
  /** The gold actions of a task. Default: `task.goldActions`, every argument compared. */
  actions?: (task: Task) => readonly GoldAction[] | undefined;
}

/**
 * 1 if every gold action was performed by some tool call of the agent, else 0 (τ²-bench's action
 * reward). A task with an empty list of gold actions scores 1; one without any rejects.
 */
export function actionMatchReward(options: ActionMatchOptions = {}): RewardFunction {
  const actionsOf = options.actions ?? ((task: Task) => task.goldActions);
  return (trajectory, task) => {
    const gold = actionsOf(task);
    if (gold === undefined) return Promise.reject(new TaskContentError(`task "${task.id}" has no gold actions to match`));
    const checks = checkActions(gold, agentToolCalls(trajectory));
    const value = checks.every((check) => check.matched) ? 1 : 0;
    return Promise.resolve(scored(value, { action: value }));
  };
}
