import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "../testing/raw-http.js";
import { TableBackend } from "../testing/table-backend.js";
import { ApiKeys, isLoopbackHost, keyId } from "./auth.js";
import type { TinkerServer } from "./options.js";
import { matchRoute, ROUTES, targetSegments } from "./routes.js";
import { checkExposure, startTinkerServer } from "./server.js";

const KEY = "tml-a-key-of-more-than-thirty-two-characters";

describe("keys", () => {
  it("knows a key by its SHA-256, and opens nothing for a wrong, partial or missing key", () => {
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    expect(keyId("abc")).toBe("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const keys = new ApiKeys(["abc", KEY]);
    expect(keys.check("abc")).toBe(keyId("abc"));
    expect(keys.check(KEY)).toBe(keyId(KEY));
    for (const wrong of ["ab", "abcd", "ABC", "", undefined, ["abc", "abc"], KEY.slice(0, -1)]) expect(keys.check(wrong)).toBeUndefined();
    expect(new ApiKeys([]).check(undefined)).toBe("anonymous");
  });

  it("refuses to listen beyond loopback without a key of 32 characters or more", async () => {
    expect(["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"].every(isLoopbackHost)).toBe(true);
    expect(["0.0.0.0", "::", "10.0.0.1", "127.0.0.1.example.com", "localhost.example"].some(isLoopbackHost)).toBe(false);
    expect(() => checkExposure({ host: "0.0.0.0" })).toThrow(
      "refusing to listen on 0.0.0.0 without an API key: set apiKey (at least 32 characters), or bind to 127.0.0.1",
    );
    expect(() => checkExposure({ host: "::", apiKey: ["tml-short"] })).toThrow(
      "refusing to listen on ::: every apiKey needs at least 32 characters beyond loopback",
    );
    expect(() => checkExposure({ host: "0.0.0.0", apiKey: KEY })).not.toThrow();
    expect(() => checkExposure({ host: "127.0.0.1" })).not.toThrow();
    // Refused before it listens.
    await expect(startTinkerServer({ backend: new TableBackend(4, 0), host: "0.0.0.0" })).rejects.toThrow(/without an API key/);
  });
});

describe("route matching", () => {
  it("decodes the target into segments, as hand-written here", () => {
    expect(targetSegments("/%61pi/v%31//x/./y/../z?q=1")).toEqual(["api", "v1", "x", "z"]);
    expect(targetSegments("http://127.0.0.1:9/api/v1/healthz/%2e%2e/forward")).toEqual(["api", "v1", "forward"]);
    expect(targetSegments("/api%2Fv1%2Fforward")).toEqual(["api/v1/forward"]);
    expect(targetSegments("//api/v1")).toEqual(["api", "v1"]);
    expect(() => targetSegments("/api/%zz")).toThrow("malformed percent-encoding");
    expect(() => targetSegments("*")).toThrow("neither a path nor an absolute URL");
  });

  it("matches the route on the decoded path, HEAD as GET, and names the methods a path takes", () => {
    expect(matchRoute("POST", "/%61pi/v1/create_session").spec).toEqual({ method: "POST", path: "create_session", protected: true });
    expect(matchRoute("HEAD", "/api/v1/healthz").spec.protected).toBe(false);
    expect(matchRoute("GET", "/api/v1/samplers/s%3A1").param).toBe("s:1");
    expect(() => matchRoute("GET", "/api/v1/create_session")).toThrow("/api/v1/create_session takes POST, not GET");
    expect(() => matchRoute("POST", "/API/v1/create_session")).toThrow("no route POST /API/v1/create_session");
    expect(() => matchRoute("GET", "/api/v1/samplers/a%2Fb/c")).toThrow("no route");
  });
});

/** The spellings of one route's target, each with what it must get without a key: 401 where it names the route, else any refusal. */
function spellings(path: string, port: number): { target: string; same: boolean }[] {
  const [head, ...tail] = path.split("/");
  const encode = (s: string) => s.replace(/[a-z0-9]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
  const upper = (s: string) => s.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const rest = tail.length > 0 ? `/${tail.join("/")}` : "";
  return [
    { target: `/api/v1/${path}`, same: true },
    { target: `/%61pi/v1/${path}`, same: true },
    { target: `/api/v%31/${path}`, same: true },
    { target: `/api/v1/${encode(head!)}${rest}`, same: true },
    { target: `/api/v1/${upper(head!)}${rest}`, same: true },
    { target: `//api//v1//${path}`, same: true },
    { target: `/api/v1/${path}/`, same: true },
    { target: `/api/v1/./${path}`, same: true },
    { target: `/api/v1/healthz/../${path}`, same: true },
    { target: `/api/v1/healthz/%2e%2e/${path}`, same: true },
    { target: `/api/x/../v1/${path}`, same: true },
    { target: `/api/v1/${path}?healthz`, same: true },
    { target: `/api/v1/${path}?/api/v1/healthz`, same: true },
    { target: `http://127.0.0.1:${port}/api/v1/${path}`, same: true },
    { target: `HTTP://localhost/api/v1/${path}`, same: true },
    { target: `/api%2Fv1%2F${path.replaceAll("/", "%2F")}`, same: false },
    { target: `/api/v1%2F${path}`, same: false },
    { target: `/API/V1/${path.toUpperCase()}`, same: false },
    { target: `/api/v1/${path};healthz`, same: false },
    { target: `/api/v1/${path}%00`, same: false },
    { target: `/api/v1/${path}%`, same: false },
    { target: `/api/v1/healthz;/../${path}`, same: false },
  ];
}

/** `run` over `items`, `width` at a time, results in order. */
async function inBatches<T, R>(items: readonly T[], width: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(run))));
  return out;
}

describe("authorization on the matched route", () => {
  let server: TinkerServer;

  beforeAll(async () => {
    server = await startTinkerServer({ createBackend: () => new TableBackend(8, 1), apiKey: KEY });
  });

  afterAll(async () => {
    await server.close();
  });

  it("refuses every protected route without a valid key, however its target is spelled", async () => {
    const protectedRoutes = ROUTES.filter((r) => r.protected);
    expect(protectedRoutes.length).toBe(ROUTES.length - 1);
    const cases: { method: string; target: string; headers: Record<string, string>; named: boolean }[] = [];
    for (const route of protectedRoutes) {
      const path = route.path.replace("{id}", "s-1");
      for (const { target, same } of spellings(path, server.port)) {
        const canonical = target === `/api/v1/${path}`;
        const methods = [route.method, "HEAD", "OPTIONS", ...(canonical ? [route.method === "GET" ? "POST" : "GET", "DELETE", "post"] : [])];
        const keys = canonical ? [undefined, "tml-wrong", KEY.toUpperCase(), `${KEY}x`, KEY.slice(1)] : [undefined];
        for (const method of methods) {
          for (const key of keys) {
            // A spelling of the route itself, with its method (or HEAD for GET), reaches the route and is refused there.
            const named = same && (method === route.method || (method === "HEAD" && route.method === "GET"));
            cases.push({ method, target, headers: { "Content-Type": "application/json", ...(key !== undefined ? { "X-API-Key": key } : {}) }, named });
          }
        }
      }
    }
    const statuses = await inBatches(cases, 16, (c) => rawRequest(server.port, c.method, c.target, c.headers, c.method === "POST" ? "{}" : ""));
    cases.forEach((c, i) => {
      const label = `${c.method} ${c.target} ${JSON.stringify(c.headers)}`;
      expect(statuses[i]!.status, label).toBeGreaterThanOrEqual(400);
      if (c.named) expect(statuses[i]!.status, label).toBe(401);
    });
    expect(cases.filter((c) => c.named).length).toBeGreaterThanOrEqual(protectedRoutes.length * 15);
  }, 60_000);

  it("opens the same routes, spelled the same ways, to the key, and health to anyone", async () => {
    for (const target of [
      "/api/v1/create_session",
      "/%61pi/v%31/%63reate_session",
      "//api/v1/healthz/../create_session",
      `http://127.0.0.1:${server.port}/api/v1/create_session?x`,
    ]) {
      const { status, text } = await rawRequest(server.port, "POST", target, { "Content-Type": "application/json", "X-API-Key": KEY }, "{}");
      expect(status, `${target} ${text.slice(-80)}`).toBe(200);
    }
    for (const target of ["/api/v1/healthz", "/api/v1/%68ealthz", "/api/v1/x/../healthz"])
      expect((await rawRequest(server.port, "GET", target)).status).toBe(200);
    expect((await rawRequest(server.port, "HEAD", "/api/v1/healthz")).status).toBe(200);
  });
});
