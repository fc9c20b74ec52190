import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTinkerServer } from "../server/server.js";
import { sdkFixtureServerOptions } from "./sdk-fixture-server.js";
import { relay } from "./relay.js";

/**
 * Records what a real Tinker Python SDK sends to this package's server and what it gets back:
 * a loopback proxy in front of the server writes every exchange to a JSON Lines fixture.
 *
 *   node --conditions=@envace/source --import tsx src/testing/record-sdk.ts <python> <out.jsonl> [zstd]
 *
 * `<python>` is an interpreter with the SDK installed; it runs `fixtures/sdk/drive_sdk.py`.
 */

/** Headers worth keeping: what the server reads, and what says which SDK sent it. */
const KEPT = ["content-type", "content-encoding", "accept", "x-stainless-package-version", "x-tinker-request-type", "x-should-retry"];

function body(bytes: Buffer, type: string | undefined): { json: unknown } | { base64: string } | Record<string, never> {
  if (bytes.length === 0) return {};
  if ((type ?? "").includes("json")) return { json: JSON.parse(bytes.toString("utf8")) as unknown };
  return { base64: bytes.toString("base64") };
}

function kept(headers: Record<string, string | string[] | undefined> | Headers): Record<string, string> {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]);
  return Object.fromEntries(
    KEPT.flatMap((name) => {
      const value = get(name);
      return typeof value === "string" ? [[name, value]] : [];
    }),
  );
}

async function main(python: string, out: string, zstd: boolean): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "tinker-sdk-"));
  const server = await startTinkerServer(sdkFixtureServerOptions(root, { zstd }));
  const lines: string[] = [];
  const proxy = createServer((req, res) => {
    void (async () => {
      const { request, response, reply } = await relay(req, server.url);
      lines.push(
        JSON.stringify({
          method: req.method,
          path: req.url,
          request: { headers: kept(req.headers), ...body(request, req.headers["content-type"]) },
          response: { status: response.status, headers: kept(response.headers), ...body(reply, response.headers.get("content-type") ?? undefined) },
        }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      res.end(reply);
    })().catch((error: unknown) => {
      res.writeHead(502).end(String(error));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const script = new URL("../../fixtures/sdk/drive_sdk.py", import.meta.url).pathname;
  const code = await new Promise<number | null>((resolve) => {
    spawn(python, [script, url], { stdio: "inherit", env: { ...process.env, TINKER_API_KEY: "tml-fixture" } }).on("exit", resolve);
  });
  proxy.close();
  proxy.closeAllConnections();
  await server.close();
  await rm(root, { recursive: true, force: true });
  await writeFile(out, `${lines.join("\n")}\n`);
  console.log(`${out}: ${lines.length} exchanges; the SDK script exited ${code}`);
  if (code !== 0) process.exitCode = 1;
}

const [python, out, mode] = process.argv.slice(2);
if (!python || !out) {
  console.error("usage: record-sdk.ts <python with the tinker SDK> <out.jsonl> [zstd]");
  process.exitCode = 2;
} else {
  await main(python, out, mode === "zstd");
}
