import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gzipBomb, zstdBomb } from "../testing/bombs.js";
import { rawRequest } from "../testing/raw-http.js";
import { TableBackend } from "../testing/table-backend.js";
import type { TinkerServer } from "./options.js";
import { ROUTES } from "./routes.js";
import { startTinkerServer } from "./server.js";

const KEY = "tml-fuzz-key-0123456789-0123456789-0123456789";
const LIMIT = 64 * 1024;
/** What `healthz` answers: the one 2xx a request without a key may get. */
const HEALTH = '{"status":"ok"}';

let server: TinkerServer;
let gzipped: Buffer;

beforeAll(async () => {
  server = await startTinkerServer({ createBackend: () => new TableBackend(8, 1), apiKey: KEY, maxBodyBytes: LIMIT, longPollMs: 50, onError: () => undefined });
  gzipped = await gzipBomb(32);
});

afterAll(async () => {
  await server.close();
});

const safeText = (max: number) => fc.string({ unit: fc.constantFrom(..."abcxyz019_-.:/%?;=&#@+~!$'()*,ABZ".split("")), maxLength: max });

/** A target: a route's path spelled some way, or anything made of URL characters. */
const target = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...ROUTES.map((r) => r.path.replace("{id}", "s-1"))),
      fc.constantFrom(
        "",
        "/%61pi/v1/",
        "/api/v%31/",
        "//api//v1//",
        "/api/v1/./",
        "/api/v1/healthz/../",
        "/api/v1/x/%2e%2e/",
        "/API/v1/",
        "http://127.0.0.1:1/api/v1/",
        "/api%2Fv1%2F",
      ),
      fc.constantFrom("", "/", "?x=1", ";m=1", "%00", "%", "/..", "?/healthz", "#f"),
    )
    .map(([path, prefix, suffix]) => `${prefix === "" ? "/api/v1/" : prefix}${path}${suffix}`),
  safeText(60).map((s) => `/${s}`),
  safeText(30).map((s) => `/api/v1/${s}`),
);

const json = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.constantFrom("{}", '{"session_id":"s"}', '{"model_id":"m","seq_id":1}', '{"request_id":"req-1"}', '{"tinker_path":"tinker://../weights/x"}'),
  fc.integer({ min: 65, max: 5000 }).map((n) => "[".repeat(n)),
);

/** A body and the Content-Encoding it is sent with (which may not be how it is encoded). */
const body: fc.Arbitrary<{ bytes: Uint8Array; encoding: string | undefined }> = fc.oneof(
  json.map((text) => ({ bytes: Buffer.from(text), encoding: undefined })),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ bytes, encoding: undefined })),
  fc.tuple(json, fc.constantFrom("gzip", "deflate", "br")).map(([text, encoding]) => {
    const encode = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync }[encoding];
    return { bytes: encode(Buffer.from(text)), encoding };
  }),
  fc
    .tuple(fc.uint8Array({ maxLength: 200 }), fc.constantFrom("gzip", "deflate", "br", "zstd", "identity", "gzip, zstd", "compress", "ZSTD"))
    .map(([bytes, encoding]) => ({ bytes, encoding })),
  fc.integer({ min: 1, max: 2400 }).map((blocks) => ({ bytes: zstdBomb(blocks), encoding: "zstd" })),
  fc.constant(null).map(() => ({ bytes: gzipped, encoding: "gzip" })),
);

const request = fc.record({
  method: fc.constantFrom("GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH", "BREW"),
  target,
  body,
  contentType: fc.constantFrom(undefined, "application/json", "application/x-protobuf", "text/plain", "application/json; charset=utf-8", "x/y"),
  key: fc.constantFrom(undefined, "tml-wrong", KEY.slice(0, -1), KEY, KEY),
  accept: fc.constantFrom(undefined, "application/x-protobuf", "*/*"),
});

describe("the server under random requests", () => {
  it("never answers 5xx, never 2xx without the key except health, and stays small and alive", async () => {
    const before = process.memoryUsage();
    let count = 0;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = {};
        if (r.contentType !== undefined) headers["Content-Type"] = r.contentType;
        if (r.body.encoding !== undefined) headers["Content-Encoding"] = r.body.encoding;
        if (r.key !== undefined) headers["X-API-Key"] = r.key;
        if (r.accept !== undefined) headers.Accept = r.accept;
        const sendsBody = r.method !== "GET" && r.method !== "HEAD";
        const { status, text } = await rawRequest(server.port, r.method, r.target, headers, sendsBody ? r.body.bytes : "");
        count++;
        const label = `${r.method} ${r.target} ${JSON.stringify(headers)} → ${text.slice(0, 300)}`;
        expect(status, label).toBeLessThan(500);
        if (r.key !== KEY && status < 300) {
          // Only health answers without a key: its body, or for HEAD its length.
          const payload = text.slice(text.indexOf("\r\n\r\n") + 4);
          expect(r.method === "HEAD" ? /content-length: 15\r\n/i.test(text) : payload === HEALTH, label).toBe(true);
        }
      }),
      { numRuns: 400, plugins: [fc.interruptAfterTimeLimit(6_000)] },
    );
    expect(count).toBeGreaterThan(50);
    // Bombs of up to 300 MiB went in; what stays is far below one of them.
    expect(process.memoryUsage().arrayBuffers - before.arrayBuffers).toBeLessThan(64 * 1024 * 1024);
    expect((await rawRequest(server.port, "GET", "/api/v1/healthz")).status).toBe(200);
  }, 30_000);
});
