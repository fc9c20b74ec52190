import type { JsonValue } from "./json.js";
import type { Task } from "./task.js";
import type { ToolCall, ToolResult, ToolSpec } from "./tool.js";

/**
 * A real tool environment. Async throughout: tools may live behind MCP or HTTP.
 * Every result it returns is `grounded`.
 */
export interface Environment {
  /** Start a fresh episode of `task`. */
  reset(task: Task): Promise<void>;
  /** The tools the agent may call in the current episode. */
  tools(): readonly ToolSpec[];
  /** Execute one tool call. Tool failures are `ToolResult`s with `status: "error"`, not throws. */
  call(call: ToolCall): Promise<ToolResult>;
  /** A snapshot of the state, for evaluators that compare final states. */
  state(): Promise<JsonValue>;
  /** The user-side environment of a dual-control domain (the user's own device), if any. */
  readonly user?: Environment;
}
