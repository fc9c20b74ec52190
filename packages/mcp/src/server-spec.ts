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

/** True for `localhost`, 127.0.0.0/8 and ::1: a server on this machine. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1";
  return false;
}

/**
 * Refuses an HTTP server off this machine unless `allowRemote`: an agent's tool calls carry what
 * it read, so sending them elsewhere is the person's decision, never a default.
 */
export function checkReach(spec: McpServerSpec, allowRemote: boolean): void {
  if (spec.transport === "stdio" || allowRemote || isLoopbackUrl(spec.url)) return;
  throw new RemoteServerRefused(
    `MCP server ${spec.url} is neither a local process (stdio) nor on loopback: allow remote MCP servers explicitly (allowRemote, --allow-remote-mcp) to use it`,
  );
}

/** A short name of the server for messages: its command line or URL. */
export function describeServer(spec: McpServerSpec): string {
  return spec.transport === "stdio" ? [spec.command, ...spec.args].join(" ") : spec.url;
}
