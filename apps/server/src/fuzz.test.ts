// Random requests against a real server on loopback: whatever the method, target, headers and
// body, no protected route answers 2xx without a valid token, no 5xx comes but an upstream's
// failure, compressed bodies are refused before they are inflated, and the server stays up.
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { policyFromSpec } from "@envace/models";
import { reply, startScriptedServer, type ScriptedServer } from "@envace/scripted-server";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, type App } from "./app.js";
import { parseServerConfig } from "./config.js";
import { MODEL } from "./testing/harness.js";
import { rawRequest, type RawAnswer } from "./testing/raw.js";

const TOKEN = "fuzz-token-0123456789abcdef0123456789abcdef";
const BODY_LIMIT = 64 * 1024;
/** The routes a request without a token may reach with a 2xx. */
const OPEN = new Set(["/health", "/ready"]);

let upstream: ScriptedServer;
let app: App;
let port: number;
/** 16 MB of zeros, gzipped (about 16 KB): inflated, it would be 256 times the body limit. */
let bomb: Buffer;

beforeAll(async () => {
  upstream = await startScriptedServer({ script: () => reply.text("ok") });
  const resolved = await policyFromSpec(`openai:${upstream.baseURL}#${MODEL},retries=0,timeout=5`);
  // Configured as if bound to every interface (every /v1 route and /metrics protected), listening on loopback only.
  app = buildApp({
    policy: resolved.policy,
    model: MODEL,
    config: parseServerConfig({ host: "0.0.0.0", port: 0, log_level: "silent", limits: { body_bytes: BODY_LIMIT } }, "fuzz"),
    tokens: [TOKEN],
  });
  // Which route answered, as the server matched it: what the invariant is about.
  app.fastify.addHook("onSend", (request, replyOut, payload, done) => {
    void replyOut.header("x-matched-route", request.routeOptions.url ?? "none");
    done(null, payload);
  });
  await app.fastify.listen({ host: "127.0.0.1", port: 0 });
  const address = app.fastify.server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
  bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 });
});

afterAll(async () => {
  await app.fastify.close();
  await upstream.close();
});

const chars = "abcxyzV019_-.:/%?;=&#@+~!$'()*,\\ ";
const text = (max: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...chars.split("")), maxLength: max });

/** Ways to spell a path: the router must either match the route (and its hooks run) or not match at all. */
const SPELLINGS: ((path: string) => string)[] = [
  (p) => p,
  (p) => p.replace("/v1", "/%76%31"),
  (p) => p.replace("/v1", "/%761"),
  (p) => p.replace("/v1", "/v%31"),
  (p) => p.replace(/^\/([a-z])/, (_m, c: string) => `/%${c.charCodeAt(0).toString(16)}`),
  (p) => `/${p}`,
  (p) => `/x/..${p}`,
  (p) => `/.${p}`,
  (p) => p.toUpperCase(),
  (p) => p.replaceAll("/", "%2F"),
  (p) => `http://127.0.0.1:${port}${p}`,
  (p) => `HTTP://localhost${p}`,
];

const target = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.oneof(
          { weight: 3, arbitrary: fc.constant("/v1/chat/completions") },
          { weight: 3, arbitrary: fc.constantFrom("/v1/models", "/metrics", "/health", "/ready", "/v1/models/scripted-model", "/") },
        ),
        fc.oneof({ weight: 3, arbitrary: fc.constant(SPELLINGS[0]!) }, { weight: 2, arbitrary: fc.constantFrom(...SPELLINGS) }),
        fc.constantFrom("", "", "", "/", "?x=1", ";m=1", "%00", "%", "/..", "?/health", "#f", "//"),
      )
      .map(([path, spell, suffix]) => `${spell(path)}${suffix}`),
  },
  { weight: 1, arbitrary: text(40).map((s) => `/${s.replaceAll(" ", "")}`) },
  { weight: 1, arbitrary: text(20).map((s) => `/v1/${s.replaceAll(" ", "")}`) },
);

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("GET", "POST") },
  { weight: 2, arbitrary: fc.constantFrom("HEAD", "OPTIONS", "PUT", "DELETE", "PATCH", "TRACE", "PROPFIND", "SEARCH") },
);

const often = <T>(usual: T, ...rare: T[]): fc.Arbitrary<T> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: fc.constantFrom(usual, ...rare) });

const chat = fc
  .record({
    model: often<string>(MODEL, "other", ""),
    messages: often<unknown>([{ role: "user", content: "hi" }], [], [{ role: "tool", content: "x" }], "hi", [
      { role: "user", content: [{ type: "image_url" }] },
    ]),
    stream: fc.boolean(),
    n: often<number | undefined>(undefined, 1, 2, 0, -1, 1e9),
    max_tokens: often<number | undefined>(undefined, 1, 0, 1e12),
  })
  .map((body) => JSON.stringify(body));

/** A well-formed chat request, spelled some way, with a token or not: the deep paths get exercised. */
const chatRequest = fc.record({
  method: often("POST", "GET", "HEAD", "PUT"),
  target: fc.constantFrom(...SPELLINGS).map((spell) => spell("/v1/chat/completions")),
  authorization: fc.constantFrom<string | undefined>(`Bearer ${TOKEN}`, `Bearer ${TOKEN}`, undefined, "Bearer wrong"),
  contentType: often<string | undefined>("application/json", "text/plain", undefined),
  body: chat.map((t) => ({ bytes: Buffer.from(t), encoding: undefined })),
});

const json = fc.oneof(
  { weight: 6, arbitrary: chat },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 2000 }).map((n) => "[".repeat(n)) },
  { weight: 1, arbitrary: text(60) },
);

/** A body, and the content-encoding it is sent with (which may not be how it is encoded). */
const body: fc.Arbitrary<{ bytes: Uint8Array; encoding: string | undefined } | undefined> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 8, arbitrary: json.map((t) => ({ bytes: Buffer.from(t), encoding: undefined })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ bytes, encoding: undefined })) },
  {
    weight: 1,
    arbitrary: fc.tuple(json, fc.constantFrom("gzip", "deflate", "br")).map(([t, encoding]) => {
      const encode = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync }[encoding];
      return { bytes: encode(Buffer.from(t)), encoding };
    }),
  },
  { weight: 1, arbitrary: fc.tuple(json, fc.constantFrom("identity", "IDENTITY", " identity ")).map(([t, encoding]) => ({ bytes: Buffer.from(t), encoding })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.uint8Array({ maxLength: 100 }), fc.constantFrom("gzip", "zstd", "gzip, br", "compress", "x"))
      .map(([bytes, encoding]) => ({ bytes, encoding })),
  },
  { weight: 1, arbitrary: fc.constant(null).map(() => ({ bytes: bomb, encoding: "gzip" })) },
);

const authorization = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(undefined, `Bearer ${TOKEN}`, `bearer  ${TOKEN} `) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "Bearer wrong",
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(1)}`,
      `Basic ${TOKEN}`,
      `Bearer  ${TOKEN} x`,
      "",
      `Bearer ${TOKEN},Bearer x`,
    ),
  },
);
const contentType = fc.oneof(
  { weight: 4, arbitrary: fc.constant("application/json") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      undefined,
      "application/json; charset=utf-8",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=latin1",
      "*/*",
    ),
  },
);

/** Whether the request carried a token the server should accept (a case-insensitive scheme, one space or more). */
const validToken = (header: string | undefined): boolean => header !== undefined && new RegExp(`^bearer +${TOKEN} *$`, "i").test(header);

const matchedRoute = (answer: RawAnswer): string | undefined => /\r\nx-matched-route: ([^\r]*)/i.exec(answer.head)?.[1];

describe("the server under random requests", () => {
  it("keeps its invariants for 200 random requests", async () => {
    const problems: string[] = [];
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(chatRequest, fc.record({ method, target, authorization, contentType, body })),
        async ({ method: m, target: t, authorization: auth, contentType: type, body: payload }) => {
          const headers: Record<string, string> = {};
          if (auth !== undefined) headers.authorization = auth;
          if (type !== undefined) headers["content-type"] = type;
          if (payload?.encoding !== undefined) headers["content-encoding"] = payload.encoding;
          const answer = await rawRequest(port, m, t, headers, payload?.bytes).catch((): RawAnswer => ({ status: 0, head: "", body: "" }));
          const what = `${m} ${JSON.stringify(t)} auth=${JSON.stringify(auth)} type=${JSON.stringify(type)} encoding=${JSON.stringify(payload?.encoding)} -> ${answer.status}`;
          const route = matchedRoute(answer);
          if (answer.status === 0) problems.push(`no answer (or the connection kept open after it): ${what}`);
          if (answer.status >= 200 && answer.status < 300 && !validToken(auth) && !OPEN.has(route ?? ""))
            problems.push(`2xx without a token on ${route ?? "an unmarked route"}: ${what}`);
          if (answer.status >= 500) {
            const code = /"code":"([a-z_]+)"/.exec(answer.body)?.[1];
            if (!(answer.status === 502 && code === "upstream_error") && !(answer.status === 504 && code === "upstream_timeout"))
              problems.push(`5xx that is not an upstream failure: ${what} ${answer.body.slice(0, 200)}`);
          }
          // A compressed body is refused as such, never inflated.
          if (
            payload?.encoding !== undefined &&
            !/^identity$/i.test(payload.encoding) &&
            answer.status >= 200 &&
            answer.status < 300 &&
            m !== "GET" &&
            m !== "HEAD"
          )
            problems.push(`compressed body accepted: ${what}`);
          return true;
        },
      ),
      { numRuns: 200, seed: Number(process.env.ENVACE_FUZZ_SEED ?? 39), endOnFailure: true },
    );
    expect(problems).toEqual([]);
    // Still alive and answering.
    expect((await rawRequest(port, "GET", "/health")).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("refuses a gzip bomb before inflating a byte of it", async () => {
    expect(bomb.length).toBeLessThan(BODY_LIMIT);
    const before = process.memoryUsage().rss;
    const answer = await rawRequest(
      port,
      "POST",
      "/v1/chat/completions",
      { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "content-encoding": "gzip" },
      bomb,
    );
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "unsupported_content_encoding" } });
    // Inflated it would be 16 MB; the process grew by less than that.
    expect(process.memoryUsage().rss - before).toBeLessThan(16 * 1024 * 1024);
  });
});
