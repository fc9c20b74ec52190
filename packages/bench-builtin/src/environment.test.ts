import { RecordError, type Task } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { BuiltinEnvironment } from "./environment.js";
import { generateTasks } from "./generate.js";
import { builtinMeta } from "./meta.js";
import { TOOL_SPECS } from "./tools.js";

const [task, other] = generateTasks({ seed: 5, count: 2, split: "train" }) as [Task, Task];

describe("BuiltinEnvironment", () => {
  it("starts from the task's world and offers the domain's tools", async () => {
    const env = new BuiltinEnvironment();
    expect(env.tools()).toEqual(TOOL_SPECS);
    await env.reset(task);
    expect(await env.state()).toEqual(builtinMeta(task).world);
  });

  it("answers calls with grounded results that carry the call id, and typed errors instead of throws", async () => {
    const env = new BuiltinEnvironment();
    await env.reset(task);
    const user = builtinMeta(task).request.user;
    expect(await env.call({ id: "a", name: "user", arguments: { user } })).toMatchObject({ status: "ok", callId: "a", name: "user" });
    expect(await env.call({ id: "b", name: "launch", arguments: {} })).toEqual({
      status: "error",
      callId: "b",
      name: "launch",
      error: { code: "TOOL_NOT_AVAILABLE", message: "no tool launch" },
    });
  });

  it("starts every episode afresh on reset", async () => {
    const env = new BuiltinEnvironment();
    await env.reset(task);
    await env.call({ id: "x", name: "cancel", arguments: { id: "o99" } });
    expect(await env.state()).toMatchObject({ rejected: [{ tool: "cancel", code: "NOT_FOUND" }] });
    await env.reset(other);
    expect(await env.state()).toEqual(builtinMeta(other).world);
    await env.reset(task);
    expect(await env.state()).toEqual(builtinMeta(task).world);
  });

  it("hands out snapshots that cannot change its state", async () => {
    const env = new BuiltinEnvironment();
    await env.reset(task);
    const snapshot = (await env.state()) as { rejected: unknown[] };
    snapshot.rejected.push("tampered");
    expect(await env.state()).toEqual(builtinMeta(task).world);
  });

  it("keeps concurrent episodes apart, one instance each", async () => {
    const [a, b] = [new BuiltinEnvironment(), new BuiltinEnvironment()];
    await Promise.all([a.reset(task), b.reset(task)]);
    await a.call({ id: "1", name: "pay", arguments: { from: "nobody", to: "x", amount: 1 } });
    expect(await b.state()).toEqual(builtinMeta(task).world);
  });

  it("refuses to run before reset", async () => {
    const env = new BuiltinEnvironment();
    await expect(env.call({ id: "a", name: "user", arguments: { user: "ada" } })).rejects.toThrow("call reset(task) before");
    await expect(env.state()).rejects.toThrow("call reset(task) before");
  });

  it("rejects a task whose metadata is not a built-in world, naming the task and field", async () => {
    const broken: Task = { ...task, id: "t-7", metadata: { ...task.metadata, world: { users: {}, items: { kelo: { price: -1 } } } } };
    const error = await new BuiltinEnvironment().reset(broken).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordError);
    expect((error as Error).message).toMatch(/^task metadata \(record t-7\): /);
    expect((error as Error).message).toContain("world.items.kelo.price");
    expect((error as Error).message).toContain("world.orders");
  });
});
