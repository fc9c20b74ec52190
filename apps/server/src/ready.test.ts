import { startScriptedServer } from "@envace/scripted-server";
import { ScriptedPolicy } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { upstreamProbe, type Readiness } from "./ready.js";
import { startServer } from "./serve.js";

describe("readiness", () => {
  it("/ready answers 200 while the upstream lists its models and 503 once it is gone; /health stays 200", async () => {
    const upstream = await startScriptedServer();
    const changes: [boolean, string][] = [];
    const ready = upstreamProbe(upstream.baseURL, { cacheMs: 0, timeoutMs: 1000, onChange: (r, detail) => changes.push([r.ready, detail]) });
    const server = await startServer({ policy: ScriptedPolicy.queues("s", {}), model: "m", config: { port: 0, log_level: "silent" }, tokens: [], ready });
    try {
      const first = await fetch(`${server.url}/ready`);
      expect([first.status, await first.json()]).toEqual([200, { status: "ready", model: "m" }]);
      await upstream.close();
      const down = await fetch(`${server.url}/ready`);
      expect([down.status, await down.json()]).toEqual([503, { status: "not_ready", model: "m", reason: "upstream_connection" }]);
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      // The log hears of each change once, with the URL the client was not shown.
      expect(changes.map(([r]) => r)).toEqual([true, false]);
      expect(changes[1]![1]).toContain(new URL(upstream.baseURL).port);
    } finally {
      await server.close();
    }
  });

  it("probes the upstream once for many callers within the cache time, and again after it", async () => {
    const upstream = await startScriptedServer();
    let clock = 0;
    const ready = upstreamProbe(upstream.baseURL, { cacheMs: 1000, now: () => clock });
    try {
      const answers: Readiness[] = await Promise.all([ready(), ready(), ready()]);
      answers.push(await ready());
      clock = 999;
      answers.push(await ready());
      expect(answers.every((a) => a.ready)).toBe(true);
      expect(upstream.requests.filter((r) => r.path === "/v1/models")).toHaveLength(1);
      clock = 1000;
      await ready();
      expect(upstream.requests.filter((r) => r.path === "/v1/models")).toHaveLength(2);
    } finally {
      await upstream.close();
    }
  });

  it("a policy in this process is ready once the server is up", async () => {
    const server = await startServer({ policy: ScriptedPolicy.queues("s", {}), model: "m", config: { port: 0, log_level: "silent" }, tokens: [] });
    try {
      expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
