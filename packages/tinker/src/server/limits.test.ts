import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { TableBackend } from "../testing/table-backend.js";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "./body.js";
import { DEFAULT_SESSION_TIMEOUT_MS, TinkerServerCore } from "./core.js";
import { startTinkerServer } from "./server.js";

async function post(url: string, route: string, body: string) {
  const response = await fetch(`${url}/api/v1/${route}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("deep JSON", () => {
  it("measures nesting outside strings, as counted by hand", () => {
    // { [ { [ : four levels.
    expect(jsonDepthExceeds('{"a":[1,{"b":[]}]}', 4)).toBe(false);
    expect(jsonDepthExceeds('{"a":[1,{"b":[]}]}', 3)).toBe(true);
    expect(jsonDepthExceeds('["[[[[", "\\"[[[["]', 1)).toBe(false);
    expect(jsonDepthExceeds("[]".repeat(1000), 1)).toBe(false);
  });

  it("answers 400 naming the limit, not 500, for a body nested 100 000 deep", async () => {
    const server = await startTinkerServer({ backend: new TableBackend(4, 0) });
    try {
      const detail = `create_session: body nests deeper than ${MAX_JSON_DEPTH} levels`;
      expect(await post(server.url, "create_session", "[".repeat(100_000))).toEqual({ status: 400, body: { detail, code: "too_deep" } });
      const deep = (n: number) => `{"tags":[],"user_metadata":${"[".repeat(n - 2)}${"]".repeat(n - 2)}}`;
      expect((await post(server.url, "create_session", deep(MAX_JSON_DEPTH + 1))).status).toBe(400);
      expect((await post(server.url, "create_session", deep(MAX_JSON_DEPTH))).body.detail).not.toBe(detail);
    } finally {
      await server.close();
    }
  });
});

describe("sessions", () => {
  it("expire after 5 minutes without a heartbeat by default, their models unloaded", async () => {
    expect(DEFAULT_SESSION_TIMEOUT_MS).toBe(300_000);
    const core = new TinkerServerCore({ createBackend: () => new TableBackend(4, 0) });
    const http = createServer(core.handle);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    try {
      const session = (await post(url, "create_session", "{}")).body.session_id as string;
      const model = (await post(url, "create_model", JSON.stringify({ session_id: session, model_seq_id: 0, base_model: "t" }))).body.model_id as string;
      core.sweep(Date.now() + 299_000);
      expect((await post(url, "session_heartbeat", JSON.stringify({ session_id: session }))).status).toBe(200);
      core.sweep(Date.now() + 300_001);
      expect((await post(url, "session_heartbeat", JSON.stringify({ session_id: session }))).body.detail).toBe(`unknown session_id "${session}"`);
      expect((await post(url, "get_info", JSON.stringify({ model_id: model }))).body.detail).toBe(`unknown model_id "${model}"`);
    } finally {
      core.close();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  it("are capped: a new one beyond the cap gets 429 saying why, and room comes back as sessions expire", async () => {
    const server = await startTinkerServer({ backend: new TableBackend(4, 0), maxSessions: 2, sessionTimeoutMs: 100 });
    try {
      expect((await post(server.url, "create_session", "{}")).status).toBe(200);
      expect((await post(server.url, "create_session", "{}")).status).toBe(200);
      const refused = await fetch(`${server.url}/api/v1/create_session`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("10");
      expect(await refused.json()).toEqual({
        detail: "create_session: this server holds at most 2 sessions at once; a session without a heartbeat for 1 s expires",
        code: "too_many_sessions",
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect((await post(server.url, "create_session", "{}")).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
