// A server fronting a small untrained tiny checkpoint on loopback, and an `openai` client for it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { policyFromSpec, TINY_COMPACT_CHAT_TEMPLATE } from "@envace/models";
import { InProcessBackend, TinyModelConfig, trainTokenizer } from "@envace/training";
import OpenAI from "openai";
import type { ServerConfigInput } from "../config.js";
import { startServer, type RunningServer } from "../serve.js";

export interface TinyHarness {
  server: RunningServer;
  client: OpenAI;
  close(): Promise<void>;
}

export const TINY_MODEL = "tiny";

/** Text to train the checkpoint's tokenizer on: what it answers does not matter, only that it has merges. */
const CORPUS = ["Look the item up, then tell the user what it costs.", '<tool_call>{"name": "lookup", "arguments": {"item": "rabo"}}</tool_call>'];

/** A random-weight checkpoint (a second or two to make), `envace serve` in front of it, and a client without retries. */
export async function startTinyHarness(config: ServerConfigInput = {}): Promise<TinyHarness> {
  const dir = await mkdtemp(join(tmpdir(), "envace-server-tiny-"));
  const tokenizer = trainTokenizer(CORPUS, { vocabSize: 300, maxLength: 4096, chatTemplate: TINY_COMPACT_CHAT_TEMPLATE, minFrequency: 1 });
  const model = TinyModelConfig.parse({
    vocabSize: tokenizer.vocabSize,
    hiddenSize: 16,
    intermediateSize: 32,
    numLayers: 1,
    numHeads: 2,
    maxPositionEmbeddings: 4096,
    eosTokenId: tokenizer.stopTokenIds[0] ?? null,
  });
  const backend = await InProcessBackend.create(model, { seed: 1, tokenizer });
  await backend.saveCheckpoint(join(dir, "tiny"));
  backend.dispose();
  const resolved = await policyFromSpec(`tiny:${join(dir, "tiny")}`);
  const server = await startServer({
    policy: resolved.policy,
    tokenizer: resolved.tokenizer,
    model: TINY_MODEL,
    config: { port: 0, log_level: "silent", ...config },
    tokens: [],
  });
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
  return {
    server,
    client,
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A counter of the server's Prometheus text, e.g. `envace_server_completion_tokens_total`. */
export async function metricValue(server: RunningServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.split(" ")[1] ?? Number.NaN);
}
