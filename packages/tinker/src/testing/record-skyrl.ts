import { writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { skyrlSession } from "./skyrl-session.js";
import { relay } from "./relay.js";

/**
 * Records this package's client against a running SkyRL tx server: a loopback proxy writes every
 * exchange of `skyrlSession` to a JSON Lines fixture, and the session's result next to it.
 *
 *   node --conditions=@envace/source --import tsx src/testing/record-skyrl.ts <tx url> <base model> fixtures/skyrl/session.jsonl
 */

export interface RecordedExchange {
  method: string;
  path: string;
  request: { contentType?: string; json?: unknown; base64?: string };
  response: { status: number; contentType?: string; json?: unknown; base64?: string };
}

export function bodyOf(bytes: Buffer, type: string | null | undefined): { json: unknown } | { base64: string } | Record<string, never> {
  if (bytes.length === 0) return {};
  if ((type ?? "").includes("json")) return { json: JSON.parse(bytes.toString("utf8")) as unknown };
  return { base64: bytes.toString("base64") };
}

async function main(target: string, baseModel: string, out: string): Promise<void> {
  const exchanges: RecordedExchange[] = [];
  const proxy = createServer((req, res) => {
    void (async () => {
      const { request, response, reply } = await relay(req, target);
      const replyType = response.headers.get("content-type");
      exchanges.push({
        method: req.method ?? "GET",
        path: req.url ?? "/",
        request: { ...(req.headers["content-type"] ? { contentType: req.headers["content-type"] } : {}), ...bodyOf(request, req.headers["content-type"]) },
        response: { status: response.status, ...(replyType ? { contentType: replyType } : {}), ...bodyOf(reply, replyType) },
      });
      res.writeHead(response.status, replyType ? { "Content-Type": replyType } : {}).end(reply);
    })().catch((error: unknown) => res.writeHead(502).end(String(error)));
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  try {
    const result = await skyrlSession(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, baseModel);
    await writeFile(out, `${exchanges.map((e) => JSON.stringify(e)).join("\n")}\n`);
    await writeFile(out.replace(/\.jsonl$/, ".result.json"), `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    proxy.close();
  }
}

const [target, baseModel, out] = process.argv.slice(2);
if (!process.argv[1]?.endsWith("record-skyrl.ts")) {
  // Imported (by the replay test) for its types and helpers: record nothing.
} else if (!target || !baseModel || !out) {
  console.error("usage: record-skyrl.ts <tx url> <base model> <out.jsonl>");
  process.exitCode = 2;
} else {
  await main(target, baseModel, out);
}
