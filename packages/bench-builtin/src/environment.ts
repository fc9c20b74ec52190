import { InvariantError } from "@envace/errors";
import type { Environment, JsonValue, Task, ToolCall, ToolResult, ToolSpec } from "@envace/protocol";
import { builtinMeta } from "./meta.js";
import { Shop, TOOL_SPECS, type ShopResult } from "./tools.js";

/** A shop answer as a protocol `ToolResult` for the call with id `callId`. */
export function toToolResult(callId: string, name: string, result: ShopResult): ToolResult {
  return result.ok ? { status: "ok", callId, name, content: result.content } : { status: "error", callId, name, error: result.error };
}

/**
 * The real environment of the built-in domain. `reset(task)` starts from the world stored in the
 * task's metadata; every call is executed by the shop's rules; tool failures come back as
 * `status: "error"` results with a typed code, never as exceptions. One instance runs one
 * episode at a time; create one per concurrent rollout.
 */
export class BuiltinEnvironment implements Environment {
  private shop: Shop | undefined;

  reset(task: Task): Promise<void> {
    // A bad task (malformed metadata) rejects the promise with a RecordError.
    return new Promise((resolve) => {
      this.shop = new Shop(builtinMeta(task).world);
      resolve();
    });
  }

  tools(): readonly ToolSpec[] {
    return TOOL_SPECS;
  }

  call(call: ToolCall): Promise<ToolResult> {
    return this.withShop((shop) => toToolResult(call.id, call.name, shop.call(call.name, call.arguments)));
  }

  state(): Promise<JsonValue> {
    return this.withShop((shop) => shop.state());
  }

  private withShop<T>(use: (shop: Shop) => T): Promise<T> {
    if (!this.shop) return Promise.reject(new InvariantError("BuiltinEnvironment: call reset(task) before using the environment"));
    return Promise.resolve(use(this.shop));
  }
}
