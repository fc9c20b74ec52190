import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Task, ToolCall, ToolSpec } from "@envace/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { McpEnvironment } from "./environment.js";
import { McpConnectError } from "./session.js";
import { alive, stdioServer } from "./testing/spawn.js";

const task = (tools: ToolSpec[] = []): Task => ({ id: "t", messages: [{ role: "user", content: "go" }], tools, metadata: {} });
const call = (name: string, args: ToolCall["arguments"] = {}): ToolCall => ({ id: `c-${name}`, name, arguments: args });
const only = (...names: string[]): ToolSpec[] => names.map((name) => ({ type: "function", function: { name } }));

const opened: McpEnvironment[] = [];
function environment(options: Partial<ConstructorParameters<typeof McpEnvironment>[0]> = {}): McpEnvironment {
  const env = new McpEnvironment({ server: stdioServer(), ...options });
  opened.push(env);
  return env;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((env) => env.close()));
});

// Each test starts Node servers (a few seconds apiece on a loaded machine).
describe("McpEnvironment over stdio", { timeout: 120_000 }, () => {
  it("lists the server's tools as tool specs, and answers text and structured content", async () => {
    const env = environment();
    await env.reset(task());
    expect(env.tools().map((t) => t.function.name)).toEqual(["echo", "add", "fail", "hang", "crash", "malformed", "refuse", "whoami"]);
    const echo = env.tools()[0]!;
    expect(echo.function.description).toBe("Repeat a text.");
    expect(echo.function.parameters).toMatchObject({ type: "object", properties: { text: { type: "string" } }, required: ["text"] });
    expect(await env.call(call("echo", { text: "héllo" }))).toEqual({ status: "ok", callId: "c-echo", name: "echo", content: "héllo" });
    expect(await env.call(call("add", { a: 2, b: 3 }))).toEqual({ status: "ok", callId: "c-add", name: "add", content: { sum: 5 } });
  });

  it("turns isError, a JSON-RPC error, invalid arguments and a malformed answer into typed tool errors, and goes on", async () => {
    const env = environment();
    await env.reset(task());
    expect(await env.call(call("fail"))).toEqual({
      status: "error",
      callId: "c-fail",
      name: "fail",
      error: { code: "MCP_TOOL_ERROR", message: "card declined" },
    });
    const refused = await env.call(call("refuse"));
    expect(refused).toMatchObject({ status: "error", error: { code: "MCP_PROTOCOL_ERROR" } });
    expect(refused.status === "error" && refused.error.message).toContain("internal failure");
    // The SDK's server reports bad arguments as a failed tool run.
    const invalid = await env.call(call("add", { a: "two", b: 3 }));
    expect(invalid).toMatchObject({ status: "error", error: { code: "MCP_TOOL_ERROR" } });
    expect(invalid.status === "error" && invalid.error.message).toContain("Input validation error");
    const malformed = await env.call(call("malformed"));
    expect(malformed).toMatchObject({ status: "error", error: { code: "MCP_MALFORMED_RESULT" } });
    expect(await env.call(call("echo", { text: "still here" }))).toMatchObject({ status: "ok", content: "still here" });
  });

  it("answers a hanging tool with MCP_TIMEOUT after the per-call timeout, and the server stays usable", async () => {
    const env = environment({ callTimeoutMs: 300 });
    await env.reset(task());
    const started = Date.now();
    expect(await env.call(call("hang"))).toEqual({
      status: "error",
      callId: "c-hang",
      name: "hang",
      error: { code: "MCP_TIMEOUT", message: "no answer from the MCP server within 300 ms" },
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await env.call(call("echo", { text: "after" }))).toMatchObject({ status: "ok", content: "after" });
  });

  it("answers the call that crashed the server, and every later one, with MCP_SERVER_EXITED; the process is gone", async () => {
    const env = environment();
    await env.reset(task());
    const pid = env.pid!;
    const crashed = await env.call(call("crash"));
    expect(crashed).toMatchObject({ status: "error", error: { code: "MCP_SERVER_EXITED" } });
    const later = await env.call(call("echo", { text: "anyone?" }));
    expect(later).toMatchObject({ status: "error", error: { code: "MCP_SERVER_EXITED" } });
    expect(later.status === "error" && later.error.message).toContain("fatal: disk on fire");
    expect(alive(pid)).toBe(false);
    expect(await env.state()).toMatchObject({
      calls: [
        { name: "crash", code: "MCP_SERVER_EXITED" },
        { name: "echo", code: "MCP_SERVER_EXITED" },
      ],
    });
  });

  it("offers only the task's tools and refuses others without asking the server", async () => {
    const log = join(mkdtempSync(join(tmpdir(), "mcp-")), "requests.log");
    const env = environment({ server: stdioServer({ MCP_TEST_LOG: log }) });
    await env.reset(task(only("echo", "add", "not-on-server")));
    expect(env.tools().map((t) => t.function.name)).toEqual(["echo", "add"]);
    expect(await env.call(call("crash"))).toEqual({
      status: "error",
      callId: "c-crash",
      name: "crash",
      error: { code: "TOOL_NOT_AVAILABLE", message: "tool crash is not available" },
    });
    expect(await env.call(call("not-on-server"))).toMatchObject({ status: "error", error: { code: "TOOL_NOT_AVAILABLE" } });
    await env.call(call("echo", { text: "x" }));
    expect(
      readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line.startsWith("tools/call")),
    ).toEqual(["tools/call echo"]);

    const custom = environment({ allow: () => ["whoami"] });
    await custom.reset(task(only("echo")));
    expect(custom.tools().map((t) => t.function.name)).toEqual(["whoami"]);
  });

  it("starts a fresh server process each episode and stops it at close, a server deaf to stdin's end included", async () => {
    const env = environment({ server: stdioServer({ MCP_TEST_STUBBORN: "1" }) });
    await env.reset(task());
    const first = env.pid!;
    await env.reset(task());
    const second = env.pid!;
    expect(second).not.toBe(first);
    expect(alive(first)).toBe(false);
    await env.close();
    expect(alive(second)).toBe(false);
    expect(env.pid).toBeNull();
    await env.close();
  });

  it("says which server could not be started, as an input error", async () => {
    const env = environment({ server: { transport: "stdio", command: "/nonexistent/mcp-server" } });
    const error = await env.reset(task()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectError);
    expect((error as Error).message).toMatch(/^MCP server \/nonexistent\/mcp-server: .*ENOENT/);
  });
});
