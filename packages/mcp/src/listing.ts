import { InputError } from "@envace/protocol";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/** Bounds on one `tools/list` walk: a server that pages forever, or lists without end, is stopped. */
export interface ListLimits {
  /** Most pages followed. Default 100. */
  maxPages: number;
  /** Most tools in all. Default 1,000. */
  maxTools: number;
  /** Most bytes of tool definitions (as JSON) in all. Default 8 MiB. */
  maxBytes: number;
  /** Longest time for the whole walk, in ms. Default 60,000. */
  listTimeoutMs: number;
  /** Deepest nesting of a tool's schema (objects and arrays). Default 64. */
  maxSchemaDepth: number;
}

export const DEFAULT_LIST_LIMITS: Readonly<ListLimits> = {
  maxPages: 100,
  maxTools: 1000,
  maxBytes: 8 * 1024 * 1024,
  listTimeoutMs: 60_000,
  maxSchemaDepth: 64,
};

/** A `tools/list` walk went past one of its limits (`limit` names it). */
export class McpListLimitError extends InputError {
  override readonly code: string = "mcp-list-limit";
  override readonly name = "McpListLimitError";
  constructor(
    readonly limit: keyof ListLimits,
    message: string,
  ) {
    super(message);
  }
}

/** The server listed a tool under a name that is not a valid tool name, or twice. */
export class McpToolNameError extends InputError {
  override readonly code: string = "mcp-tool-name";
  override readonly name = "McpToolNameError";
}

// The MCP specification's guidance: 1 to 128 characters, ASCII letters, digits, `_`, `-` and `.`.
const TOOL_NAME = /^[\w.-]{1,128}$/;

/** Refuses a listing with a name that is not a valid tool name, or a name given twice. */
export function checkToolNames(tools: readonly Tool[], server: string): void {
  const seen = new Set<string>();
  for (const tool of tools) {
    const name: unknown = tool.name;
    if (typeof name !== "string" || !TOOL_NAME.test(name)) {
      throw new McpToolNameError(`MCP server ${server} lists a tool named ${JSON.stringify(name).slice(0, 200)}: a tool name is 1 to 128 of A-Z a-z 0-9 _ - .`);
    }
    if (seen.has(name)) throw new McpToolNameError(`MCP server ${server} lists the tool ${name} twice`);
    seen.add(name);
  }
}

/** Whether `value` nests objects and arrays deeper than `limit`, measured without recursion. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** One page of a listing, as the walk sees it. */
export interface ToolPage {
  tools: Tool[];
  nextCursor?: string | undefined;
}

/**
 * Follows `tools/list` pages within `limits`; `fetchPage(cursor, timeoutMs)` asks for one page
 * and is given what is left of the walk's time.
 */
export async function listWithin(
  fetchPage: (cursor: string | undefined, timeoutMs: number) => Promise<ToolPage>,
  limits: ListLimits,
  server: string,
): Promise<Tool[]> {
  const over = (limit: keyof ListLimits, what: string): McpListLimitError =>
    new McpListLimitError(limit, `MCP server ${server}: the tool listing ${what} (${limit} = ${limits[limit]})`);
  const deadline = Date.now() + limits.listTimeoutMs;
  const tools: Tool[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  for (let pages = 0; ;) {
    if (pages === limits.maxPages) throw over("maxPages", `goes on past ${limits.maxPages} pages`);
    const left = deadline - Date.now();
    if (left <= 0) throw over("listTimeoutMs", `takes longer than ${limits.listTimeoutMs} ms`);
    let page: ToolPage;
    try {
      page = await fetchPage(cursor, left);
    } catch (error) {
      if (Date.now() >= deadline) throw over("listTimeoutMs", `takes longer than ${limits.listTimeoutMs} ms`);
      throw error;
    }
    pages++;
    for (const tool of page.tools) {
      if (tools.length === limits.maxTools) throw over("maxTools", `holds more than ${limits.maxTools} tools`);
      // Depth first: serialising a deeper value would recurse past the stack.
      if (nestsDeeperThan(tool, limits.maxSchemaDepth + 1))
        throw over("maxSchemaDepth", `has a tool schema nested deeper than ${limits.maxSchemaDepth} levels`);
      bytes += Buffer.byteLength(JSON.stringify(tool));
      if (bytes > limits.maxBytes) throw over("maxBytes", `holds more than ${limits.maxBytes} bytes of tool definitions`);
      tools.push(tool);
    }
    cursor = page.nextCursor;
    if (cursor === undefined) break;
  }
  checkToolNames(tools, server);
  return tools;
}
