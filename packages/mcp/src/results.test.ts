import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { contentOf, errorResultOf, resultOf } from "./results.js";

const call = { id: "c", name: "quote", arguments: {} };

describe("contentOf", () => {
  it("prefers structured content, keeps one text block as its text, and lists several blocks", () => {
    expect(contentOf({ content: [{ type: "text", text: "{}" }], structuredContent: { price: 1 } })).toEqual({ price: 1 });
    expect(contentOf({ content: [{ type: "text", text: '{"price": 1}' }] })).toBe('{"price": 1}');
    expect(contentOf({ content: [] })).toEqual([]);
    expect(
      contentOf({
        content: [
          { type: "text", text: "a" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
        ],
      }),
    ).toEqual(["a", { type: "image", data: "AAAA", mimeType: "image/png" }]);
  });
});

describe("errorResultOf", () => {
  const code = (error: unknown, exited?: string): string | undefined => {
    const result = errorResultOf(call, error, { timeoutMs: 10, exited });
    return result.status === "error" ? result.error.code : undefined;
  };

  it("maps the SDK's errors to typed codes", () => {
    expect(code(new McpError(ErrorCode.RequestTimeout, "Request timed out"))).toBe("MCP_TIMEOUT");
    expect(code(new McpError(ErrorCode.ConnectionClosed, "Connection closed"))).toBe("MCP_SERVER_EXITED");
    expect(code(new McpError(ErrorCode.InvalidParams, "Structured content does not match the tool's output schema: data/price must be number"))).toBe(
      "MCP_MALFORMED_RESULT",
    );
    expect(code(new McpError(ErrorCode.InvalidParams, "Tool quote not found"))).toBe("MCP_PROTOCOL_ERROR");
    expect(code(new Error("Not connected"))).toBe("MCP_SERVER_EXITED");
    expect(code(new Error("Invalid input: expected array, received string"))).toBe("MCP_MALFORMED_RESULT");
    // Once the server has exited, that is the reason, whatever the request's own error said.
    expect(code(new McpError(ErrorCode.RequestTimeout, "Request timed out"), "the MCP server exited")).toBe("MCP_SERVER_EXITED");
  });

  it("answers a result nested 10^5 deep MCP_MALFORMED_RESULT, naming the limit, without walking it recursively", () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const call = { id: "c", name: "t", arguments: {} };
    expect(resultOf(call, { content: [], structuredContent: deep })).toEqual({
      callId: "c",
      name: "t",
      status: "error",
      error: { code: "MCP_MALFORMED_RESULT", message: "the MCP server's result nests deeper than 100 levels" },
    });
    expect(resultOf(call, { content: [{ type: "text", text: "x" }], isError: true, structuredContent: deep }).status).toBe("error");
  });
});
