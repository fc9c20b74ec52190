import { InputError } from "@envace/protocol";
import { isIP } from "node:net";
import { z } from "zod";

/** An MCP server started as a child process and spoken to over its stdin and stdout. */
export const StdioServerSpec = z.object({
  transport: z.literal("stdio"),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to the variables the SDK passes on by default (PATH, HOME, …): secrets are not inherited. */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
});
export type StdioServerSpec = z.infer<typeof StdioServerSpec>;

/** An MCP server reached over streamable HTTP. */
export const HttpServerSpec = z.object({
  transport: z.literal("http"),
  url: z.url(),
  headers: z.record(z.string(), z.string()).optional(),
});
export type HttpServerSpec = z.infer<typeof HttpServerSpec>;

/** Where an MCP server is and how to reach it. */
export const McpServerSpec = z.discriminatedUnion("transport", [StdioServerSpec, HttpServerSpec]);
export type McpServerSpec = z.infer<typeof McpServerSpec>;
export type McpServerSpecInput = z.input<typeof McpServerSpec>;

/** A server the person did not allow: neither a local process nor on this machine's loopback. */
export class RemoteServerRefused extends InputError {
  override readonly code: string = "mcp-remote-refused";
  override readonly name = "RemoteServerRefused";
}

/** True for an address in 127.0.0.0/8 or ::1 (also as `::ffff:127.…`): this machine's loopback. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1]!.startsWith("127.");
  // The same as URL writes it: `::ffff:7f00:1` is 127.0.0.1.
  const mappedHex = /^::ffff:([\da-f]{1,4}):[\da-f]{1,4}$/i.exec(bare);
  if (mappedHex) return Number.parseInt(mappedHex[1]!, 16) >> 8 === 127;
  return bare === "::1" || /^(?:0{1,4}:){7}0{0,3}1$/.test(bare);
}

/**
 * True when the URL's host is a loopback address as written (127.0.0.0/8, `[::1]`). A name,
 * `localhost` included, says nothing until it is resolved: the connection checks the addresses it
 * resolves to (`reachDispatcher`).
 */
export function isLoopbackUrl(url: string): boolean {
  return isLoopbackAddress(new URL(url).hostname);
}

/**
 * Refuses at once an HTTP server whose URL names an address off this machine, unless
 * `allowRemote`. A host name passes here and is checked when the connection resolves it: an agent's
 * tool calls carry what it read, so sending them elsewhere is the person's decision, never a default.
 */
export function checkReach(spec: McpServerSpec, allowRemote: boolean): void {
  if (spec.transport === "stdio" || allowRemote) return;
  const host = new URL(spec.url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0 && !isLoopbackAddress(host)) throw remoteRefused(spec.url, host);
}

/** The refusal of `url`, whose host is or resolved to `address`. */
export function remoteRefused(url: string, address: string): RemoteServerRefused {
  const host = new URL(url).hostname;
  const where = host.replace(/^\[|\]$/g, "") === address ? "" : ` (${host} resolves to ${address})`;
  return new RemoteServerRefused(
    `MCP server ${url}${where} is neither a local process (stdio) nor on loopback: allow remote MCP servers explicitly (allowRemote, --allow-remote-mcp) to use it`,
  );
}

/**
 * Without the remote opt-in, a name that cannot be resolved cannot be shown to be on loopback:
 * refused as such, naming the resolver's answer, rather than as a failed connection.
 */
export function unresolvedRefused(url: string, error: unknown): RemoteServerRefused {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? (error instanceof Error ? error.message : String(error));
  return new RemoteServerRefused(
    `MCP server ${url}: ${new URL(url).hostname} cannot be resolved (${code}), so it cannot be shown to be on loopback; a server must be a local process (stdio) or on loopback unless remote MCP servers are allowed explicitly (allowRemote, --allow-remote-mcp)`,
    { cause: error },
  );
}

/** A short name of the server for messages: its command line or URL. */
export function describeServer(spec: McpServerSpec): string {
  return spec.transport === "stdio" ? [spec.command, ...spec.args].join(" ") : spec.url;
}
