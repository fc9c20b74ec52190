// A server fronting the scripted upstream on loopback, and an `openai` client for it.
import { policyFromSpec } from "@envace/models";
import { startScriptedServer, type Script, type ScriptedServer } from "@envace/scripted-server";
import OpenAI from "openai";
import type { ServerConfigInput } from "../config.js";
import { startServer, type RunningServer } from "../serve.js";

export interface Harness {
  upstream: ScriptedServer;
  server: RunningServer;
  client: OpenAI;
  close(): Promise<void>;
}

export const MODEL = "scripted-model";

/** The scripted upstream, the server in front of it (`openai:<upstream>#scripted-model`), and a client without retries. */
export async function startHarness(
  options: { script?: Script; config?: ServerConfigInput; tokens?: string[]; apiKey?: string; spec?: string } = {},
): Promise<Harness> {
  const upstream = await startScriptedServer(options.script === undefined ? {} : { script: options.script });
  const resolved = await policyFromSpec(`openai:${upstream.baseURL}#${MODEL},retries=0,timeout=10${options.spec ?? ""}`);
  const server = await startServer({
    policy: resolved.policy,
    model: MODEL,
    config: { port: 0, log_level: "silent", ...options.config },
    tokens: options.tokens ?? [],
  });
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: options.apiKey ?? "unused", maxRetries: 0 });
  return {
    upstream,
    server,
    client,
    close: async () => {
      await server.close();
      await upstream.close();
    },
  };
}

/** A tool the model may call: `lookup(item)`. */
export const lookupTool = {
  type: "function",
  function: { name: "lookup", description: "Look an item up.", parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] } },
} as const;

/** POST a raw body to the chat route (for bodies the `openai` client's types would refuse). */
export async function postRaw(
  server: RunningServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { error?: { message: string; type: string; param: string | null; code: string | null } } }> {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { error?: { message: string; type: string; param: string | null; code: string | null } } };
}

/** Poll `condition` every 10 ms for up to 3 s. */
export async function waitFor(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 3000) throw new Error("condition not met within 3 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
