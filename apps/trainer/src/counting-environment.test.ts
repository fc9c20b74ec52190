import type { Environment, ToolCall } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { CallCounter } from "./rollout.js";
import { CountingEnvironment } from "./counting-environment.js";

function echo(user?: Environment): Environment {
  return {
    reset: () => Promise.resolve(),
    tools: () => [],
    call: (call) => Promise.resolve({ status: "ok", callId: call.id, name: call.name, content: call.arguments }),
    state: () => Promise.resolve(null),
    ...(user === undefined ? {} : { user }),
  };
}

const call = (id: string): ToolCall => ({ id, name: "echo", arguments: { id } });

describe("CountingEnvironment", () => {
  it("counts every call, and apart those made before the committed execution began", async () => {
    const environment = new CountingEnvironment(echo());
    await environment.call(call("a"));
    environment.markCommitStart();
    expect(await environment.call(call("b"))).toEqual({ status: "ok", callId: "b", name: "echo", content: { id: "b" } });
    expect([environment.calls, environment.callsBeforeCommit]).toEqual([2, 1]);
  });

  it("forwards close to the inner environment, and closes one without resources as a no-op", async () => {
    let closed = 0;
    const inner = { ...echo(), close: () => Promise.resolve(void (closed += 1)) };
    await new CountingEnvironment(inner).close();
    await new CountingEnvironment(echo()).close();
    expect(closed).toBe(1);
  });

  it("keeps the user side of a dual-control environment", () => {
    const user = echo();
    expect(new CountingEnvironment(echo(user)).user).toBe(user);
    expect(new CountingEnvironment(echo()).user).toBeUndefined();
  });
});

describe("CallCounter", () => {
  it("tallies the calls of every environment it wrapped since the last take", async () => {
    const counter = new CallCounter();
    const [first, second] = [counter.wrap(echo()), counter.wrap(echo())];
    await first.call(call("a"));
    await second.call(call("b"));
    await second.call(call("c"));
    expect(counter.take()).toBe(3);
    expect(counter.take()).toBe(0);
  });
});
