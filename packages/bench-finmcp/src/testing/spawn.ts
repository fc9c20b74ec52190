import { fileURLToPath } from "node:url";

const packageDir = fileURLToPath(new URL("../..", import.meta.url));

/** The fixture finance server as a stdio MCP server spec: this Node, with tsx, in its own process. */
export function financeServer(): { transport: "stdio"; command: string; args: string[]; cwd: string } {
  return {
    transport: "stdio",
    command: process.execPath,
    args: ["--import", "tsx", fileURLToPath(new URL("finance-server.ts", import.meta.url))],
    cwd: packageDir,
  };
}

/** A fixture file's path. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`fixtures/${name}`, import.meta.url));
}
