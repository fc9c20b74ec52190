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
  /**
   * Ends the episode `reset` began and releases what it holds (a server process, a connection).
   * Whoever runs the episode calls it once the episode is over, on every path: `unfold` does, in
   * a `finally`, so errors and cancellation release too. It must be idempotent and never throw
   * for a failure to release; `state()` still answers afterwards (evaluators score after the
   * rollout), and a later `reset` may start a new episode.
   *
   * Optional because most environments are in-process and hold nothing to release: callers use
   * `await environment.close?.()`, and an implementation without resources writes nothing.
   */
  close?(): Promise<void>;
}
