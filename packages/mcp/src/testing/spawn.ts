import { fileURLToPath } from "node:url";
import type { StdioServerSpec } from "../server-spec.js";

const packageDir = fileURLToPath(new URL("../..", import.meta.url));
const serverFile = fileURLToPath(new URL("./server.ts", import.meta.url));

/** The test server as a stdio MCP server: this Node, with tsx, in its own process. */
export function stdioServer(env: Record<string, string> = {}): StdioServerSpec {
  return { transport: "stdio", command: process.execPath, args: ["--import", "tsx", serverFile], env, cwd: packageDir };
}

/** Whether a process with this id exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const listingServerFile = fileURLToPath(new URL("./listing-server.ts", import.meta.url));

/** The misbehaving listing server (`testing/listing-server.ts`) in `mode`, over stdio. */
export function listingServer(mode: "endless" | "duplicate" | "control"): StdioServerSpec {
  return { transport: "stdio", command: process.execPath, args: ["--import", "tsx", listingServerFile], env: { MCP_TEST_LISTING: mode }, cwd: packageDir };
}
