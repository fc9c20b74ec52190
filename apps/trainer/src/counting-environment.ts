import type { Environment, JsonValue, Task, ToolCall, ToolResult, ToolSpec } from "@envace/protocol";

/**
 * A real environment that counts the calls made to it, so a run can show how many real calls
 * training and evaluation made (0 for self-unfolded training, 0 during private rehearsal). Keeps
 * the inner environment's user side (dual control) as it is.
 */
export class CountingEnvironment implements Environment {
  calls = 0;
  /** Calls made before `markCommitStart`: during private rehearsal these must stay 0. */
  callsBeforeCommit = 0;
  readonly user?: Environment;
  readonly #inner: Environment;
  readonly #onCall: (() => void) | undefined;
  #committing = false;

  /** `onCall` runs at every call too, for a tally over many environments. */
  constructor(inner: Environment, onCall?: () => void) {
    this.#inner = inner;
    this.#onCall = onCall;
    if (inner.user !== undefined) this.user = inner.user;
  }

  markCommitStart(): void {
    this.#committing = true;
  }

  reset(task: Task): Promise<void> {
    return this.#inner.reset(task);
  }

  tools(): readonly ToolSpec[] {
    return this.#inner.tools();
  }

  call(call: ToolCall): Promise<ToolResult> {
    this.calls += 1;
    if (!this.#committing) this.callsBeforeCommit += 1;
    this.#onCall?.();
    return this.#inner.call(call);
  }

  state(): Promise<JsonValue> {
    return this.#inner.state();
  }

  async close(): Promise<void> {
    await this.#inner.close?.();
  }
}
