import { describe, expect, it } from "vitest";
import { isLoopbackUrl, McpServerSpec } from "./server-spec.js";

describe("isLoopbackUrl", () => {
  it("accepts loopback addresses as written (127.0.0.0/8, ::1) and trusts no name before resolution", () => {
    for (const url of [
      "http://127.0.0.1/mcp",
      "http://127.8.9.10:1/x",
      "http://[::1]:8080/mcp",
      "http://[::ffff:127.0.0.2]/mcp",
      "http://[0:0:0:0:0:0:0:1]/mcp",
    ]) {
      expect([url, isLoopbackUrl(url)]).toEqual([url, true]);
    }
    for (const url of [
      "http://localhost:3000/mcp",
      "http://api.localhost/mcp",
      "http://10.0.0.1/mcp",
      "https://example.com/mcp",
      "http://128.0.0.1/mcp",
      "http://[::2]/mcp",
      "http://0.0.0.0/mcp",
      "http://[::ffff:10.0.0.1]/mcp",
    ]) {
      expect([url, isLoopbackUrl(url)]).toEqual([url, false]);
    }
  });
});

describe("McpServerSpec", () => {
  it("fills stdio arguments and rejects a spec without a transport it knows", () => {
    expect(McpServerSpec.parse({ transport: "stdio", command: "finance-mcp" })).toEqual({ transport: "stdio", command: "finance-mcp", args: [] });
    expect(McpServerSpec.safeParse({ transport: "sse", url: "http://127.0.0.1/sse" }).success).toBe(false);
    expect(McpServerSpec.safeParse({ transport: "http", url: "not a url" }).success).toBe(false);
  });
});
