// Authorization is a property of the matched route: no spelling of a protected route's target,
// no method, reaches it without a valid token.
import { reply, startScriptedServer, type ScriptedServer } from "@envace/scripted-server";
import { policyFromSpec } from "@envace/models";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, type App } from "./app.js";
import { parseServerConfig } from "./config.js";
import { startServer, type RunningServer } from "./serve.js";
import { MODEL } from "./testing/harness.js";
import { rawRequest, routesOf, type RawAnswer } from "./testing/raw.js";

const TOKEN = "tok-0123456789abcdef0123456789abcdef-xyz"; // 40 characters
const CHAT_BODY = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Hello?" }] });

/** `%xx` of one character, lower- or upper-case hex. */
const encode = (char: string, upper = false): string => {
  const hex = char.charCodeAt(0).toString(16).padStart(2, "0");
  return `%${upper ? hex.toUpperCase() : hex}`;
};

/** Ways to write `path` that a lenient router, proxy or URL parser may read as `path`. */
export function spellings(path: string, port: number): string[] {
  const segments = path.split("/").slice(1);
  const join = (parts: string[]): string => `/${parts.join("/")}`;
  const out = new Set<string>([path]);
  segments.forEach((segment, i) => {
    const with_ = (replacement: string): string => join(segments.map((s, j) => (j === i ? replacement : s)));
    // Each character encoded alone, the first two together (`/%76%31/`), the whole segment.
    Array.from(segment).forEach((char, k) => out.add(with_(segment.slice(0, k) + encode(char) + segment.slice(k + 1))));
    out.add(
      with_(
        Array.from(segment)
          .map((c) => encode(c, true))
          .join(""),
      ),
    );
    out.add(with_(segment.toUpperCase()));
    out.add(with_(segment[0]!.toUpperCase() + segment.slice(1)));
  });
  const rest = path.slice(1);
  for (const extra of [
    // Encoded and doubled slashes, a trailing one.
    `/${rest.replaceAll("/", "%2F")}`,
    `/${rest.replaceAll("/", "%2f")}`,
    `/${rest.replace("/", "%2F")}`,
    `/${path}`,
    path.replace(/\/(?=[^/]*$)/, "//"),
    `${path}/`,
    `${path}//`,
    // Dot segments, plain and encoded.
    `/x/..${path}`,
    `/.${path}`,
    `/x/%2e%2e${path}`,
    `/%2e${path}`,
    path.replace(/\/(?=[^/]*$)/, "/./"),
    path.replace(/\/(?=[^/]*$)/, "/x/../"),
    `/x/..%2F${rest}`,
    // Case of the whole path.
    path.toUpperCase(),
    // Query, matrix and fragment suffixes.
    `${path}?a=b`,
    `${path}?`,
    `${path};x`,
    `${path};x=y?a=b`,
    `${path}#x`,
    `${path}%3Fa=b`,
    // Backslashes, which some URL parsers read as slashes.
    path.replaceAll("/", "\\"),
    // Absolute-form, which a proxy sends and a server must accept.
    `http://127.0.0.1:${port}${path}`,
    `http://localhost:${port}${path}`,
    `HTTP://127.0.0.1:${port}${path}`,
    `http://127.0.0.1:${port}/%76%31${path.replace(/^\/v1/, "")}`,
    `http://127.0.0.1:${port}//${rest}`,
  ]) {
    out.add(extra);
  }
  return [...out];
}

/** Authorization headers that carry no valid token. */
const BAD_AUTH: Record<string, string>[] = [
  {},
  { authorization: "Bearer wrong-token-wrong-token-wrong-token!" },
  { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
  { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` },
  { authorization: "Bearer" },
  { "x-api-key": TOKEN },
];

let upstream: ScriptedServer;
let app: App;
let port: number;

beforeAll(async () => {
  // Every completion that gets through answers 200, so a bypass shows as a 2xx.
  upstream = await startScriptedServer({ script: () => reply.text("got through") });
  const resolved = await policyFromSpec(`openai:${upstream.baseURL}#${MODEL},retries=0,timeout=10`);
  // Configured as if bound to every interface (so /metrics is protected too), listening on loopback only.
  const config = parseServerConfig({ host: "0.0.0.0", port: 0, log_level: "silent" }, "test");
  app = buildApp({ policy: resolved.policy, model: MODEL, config, tokens: [TOKEN, `${TOKEN}-second`] });
  // A route the embedding program adds under /v1 is protected like the server's own.
  app.fastify.get("/v1/caller-route", () => ({ ok: true }));
  await app.fastify.listen({ host: "127.0.0.1", port: 0 });
  const address = app.fastify.server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
});

afterAll(async () => {
  await app.fastify.close();
  await upstream.close();
});

/** Every registered route, from Fastify's own table. */
function routeTable(): { method: string; url: string }[] {
  return routesOf(app.fastify.printRoutes({ commonPrefix: false }));
}

const isProtected = (url: string): boolean => url === "/v1" || url.startsWith("/v1/") || url === "/metrics";

describe("authorization on the matched route", () => {
  it("the route table has the protected routes and nothing else open but health and readiness", () => {
    const routes = routeTable();
    expect(routes).toEqual(
      expect.arrayContaining([
        { method: "POST", url: "/v1/chat/completions" },
        { method: "GET", url: "/v1/models" },
        { method: "HEAD", url: "/v1/models" },
        { method: "GET", url: "/metrics" },
        { method: "GET", url: "/v1/caller-route" },
      ]),
    );
    expect([...new Set(routes.filter((r) => !isProtected(r.url)).map((r) => r.url))].sort()).toEqual(["/health", "/ready"]);
  });

  it("every protected route answers 2xx with the token, spelled plainly (the battery below can fail)", async () => {
    for (const route of routeTable().filter((r) => isProtected(r.url))) {
      const answer = await rawRequest(
        port,
        route.method,
        route.url,
        { authorization: `Bearer ${TOKEN}`, ...(route.method === "POST" ? { "content-type": "application/json" } : {}) },
        route.method === "POST" ? CHAT_BODY : undefined,
      );
      expect([route, answer.status]).toEqual([route, 200]);
    }
  });

  it("no spelling of a protected route's target, with any method, answers 2xx without a valid token", async () => {
    const leaks: string[] = [];
    let sent = 0;
    for (const route of routeTable().filter((r) => isProtected(r.url))) {
      const requests: { method: string; target: string; headers: Record<string, string> }[] = [];
      for (const method of new Set([route.method, "HEAD", "OPTIONS", "GET", "POST"])) {
        for (const target of spellings(route.url, port)) {
          // Every header without a valid token on the plain target; on the others, none and a wrong one.
          for (const auth of target === route.url ? BAD_AUTH : BAD_AUTH.slice(0, 2))
            requests.push({ method, target, headers: { ...auth, ...(method === "POST" ? { "content-type": "application/json" } : {}) } });
        }
      }
      // A few at a time: the answers are quick, and the upstream is on the same loop.
      for (let i = 0; i < requests.length; i += 32) {
        const batch = requests.slice(i, i + 32);
        const answers = await Promise.all(
          batch.map((r) =>
            rawRequest(port, r.method, r.target, r.headers, r.method === "POST" ? CHAT_BODY : undefined).catch((): RawAnswer => ({
              status: 0,
              head: "",
              body: "",
            })),
          ),
        );
        answers.forEach((answer, k) => {
          const r = batch[k]!;
          if (answer.status >= 200 && answer.status < 300) leaks.push(`${r.method} ${r.target} ${JSON.stringify(r.headers)} -> ${answer.status}`);
        });
        sent += batch.length;
      }
    }
    expect(leaks).toEqual([]);
    expect(sent).toBeGreaterThan(600);
    // Nothing reached the model.
    expect(upstream.scripted).toHaveLength(1);
  });

  it("takes any of the tokens, with the scheme in any case and spaces around the token, and nothing else", async () => {
    const status = async (authorization: string): Promise<number> => (await rawRequest(port, "GET", "/v1/models", { authorization })).status;
    expect(await Promise.all([`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER   ${TOKEN}  `, `Bearer ${TOKEN}-second`].map(status))).toEqual([
      200, 200, 200, 200,
    ]);
    expect(
      await Promise.all(
        [`Bearer ${TOKEN}-third`, `Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN} ${TOKEN}`, `Bearer\t${TOKEN}`, `Token ${TOKEN}`, TOKEN].map(status),
      ),
    ).toEqual([401, 401, 401, 401, 401, 401]);
  });

  it("the openai client with a base URL that spells /v1 as /%761 gets an authentication error", async () => {
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/%761`, apiKey: "not-a-valid-token", maxRetries: 0 });
    await expect(client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Hello?" }] })).rejects.toThrow(OpenAI.AuthenticationError);
    await expect(client.models.list()).rejects.toThrow(OpenAI.AuthenticationError);
  });
});

describe("a server on loopback", () => {
  let server: RunningServer;
  beforeAll(async () => {
    const { policy } = await policyFromSpec(`openai:${upstream.baseURL}#${MODEL},retries=0`);
    server = await startServer({ policy, model: MODEL, config: { port: 0, log_level: "silent" }, tokens: [TOKEN] });
  });
  afterAll(async () => {
    await server.close();
  });

  it("keeps /metrics open to this machine's scrapers, and /v1 closed", async () => {
    expect((await rawRequest(server.port, "GET", "/metrics")).status).toBe(200);
    expect((await rawRequest(server.port, "GET", "/%761/models")).status).toBe(401);
    expect((await rawRequest(server.port, "GET", "/v1/models", { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });

  it("answers an unknown route 404 without echoing the target", async () => {
    const answer = await rawRequest(server.port, "GET", "/no/such/route-7d1f?secret=x");
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain("route-7d1f");
    expect(answer.body).not.toContain("secret");
    expect(JSON.parse(answer.body)).toMatchObject({ error: { type: "not_found_error", code: "unknown_route" } });
  });
});
