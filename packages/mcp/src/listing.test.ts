import { describe, expect, it } from "vitest";
import { checkToolNames, DEFAULT_LIST_LIMITS, McpListLimitError, McpToolNameError, nestsDeeperThan } from "./listing.js";
import { listMcpTools, openSession } from "./session.js";
import { listingServer } from "./testing/spawn.js";

const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("tools/list against a real server that pages forever (stdio)", () => {
  it("stops at each limit with a typed error naming it", { timeout: 30_000 }, async () => {
    expect(DEFAULT_LIST_LIMITS).toEqual({ maxPages: 100, maxTools: 1000, maxBytes: 8 * 1024 * 1024, listTimeoutMs: 60_000, maxSchemaDepth: 64 });
    const session = await openSession(listingServer("endless"), { timeoutMs: 20_000 });
    try {
      // The defaults alone end the walk: 100 pages (200 tools).
      const byDefault = await rejection(session.listTools());
      expect(byDefault).toBeInstanceOf(McpListLimitError);
      expect((byDefault as McpListLimitError).limit).toBe("maxPages");
      expect((byDefault as Error).message).toMatch(/the tool listing goes on past 100 pages \(maxPages = 100\)$/);

      const unbounded = { maxPages: 1e9, maxTools: 1e9, maxBytes: 1e12 };
      const tools = (await rejection(session.listTools({ ...unbounded, maxTools: 7 }))) as McpListLimitError;
      expect([tools.limit, tools.message.endsWith("holds more than 7 tools (maxTools = 7)")]).toEqual(["maxTools", true]);
      // Each tool is {"name":"tool_N_a","description":"A tool of a listing that never ends.","inputSchema":{…}}: about 110 bytes.
      const bytes = (await rejection(session.listTools({ ...unbounded, maxBytes: 1000 }))) as McpListLimitError;
      expect(bytes.limit).toBe("maxBytes");
      const started = Date.now();
      const time = (await rejection(session.listTools({ ...unbounded, listTimeoutMs: 300 }))) as McpListLimitError;
      expect(time.limit).toBe("listTimeoutMs");
      expect(Date.now() - started).toBeLessThan(3000);
      expect(session.exited()).toBeUndefined();
    } finally {
      await session.close();
    }
  });

  it("listMcpTools refuses a listing with a duplicate name", { timeout: 30_000 }, async () => {
    const error = await rejection(listMcpTools(listingServer("duplicate"), { timeoutMs: 20_000 }));
    expect(error).toBeInstanceOf(McpToolNameError);
    expect((error as Error).message).toMatch(/lists the tool echo twice$/);
  });
});

describe("tool names", () => {
  it("accepts the MCP specification's names and refuses control characters, empty, overlong and duplicate names", () => {
    expect(() => checkToolNames([tool("get_weather"), tool("admin.tools-list"), tool("A".repeat(128))], "s")).not.toThrow();
    for (const name of ["", "bad\u0007name", "tab\tname", "two words", "A".repeat(129), "new\nline", "é"]) {
      expect(() => checkToolNames([tool(name)], "s")).toThrow(McpToolNameError);
    }
    expect(() => checkToolNames([tool("a"), tool("b"), tool("a")], "s")).toThrow("MCP server s lists the tool a twice");
  });

  it("measures nesting without recursion", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { properties: deep };
    expect(nestsDeeperThan(deep, 64)).toBe(true);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 2)).toBe(true);
  });
});
