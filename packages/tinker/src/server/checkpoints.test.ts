import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tableCheckpoints } from "../testing/sdk-fixture-server.js";
import { TableBackend } from "../testing/table-backend.js";
import { parseCheckpointPath, RECORD_FILE } from "./checkpoints.js";
import type { TinkerServer } from "./options.js";
import { startTinkerServer } from "./server.js";

const A = "tml-key-a-0123456789-0123456789-0123456789";
const B = "tml-key-b-0123456789-0123456789-0123456789";

describe("tinker:// paths", () => {
  it("parses a path into its model id and name", () => {
    expect(parseCheckpointPath("tinker://session-1a2b:train:0/weights/step-3", "path")).toEqual({ modelId: "session-1a2b:train:0", name: "step-3" });
    expect(parseCheckpointPath("tinker://model_ab12cd34/weights/ckpt_1", "path")).toEqual({ modelId: "model_ab12cd34", name: "ckpt_1" });
  });

  it("refuses traversal, slashes, percent-encoding, absolute paths and other kinds", () => {
    for (const path of [
      "tinker://../weights/x",
      "tinker://./weights/x",
      "tinker://%2e%2e/weights/x",
      "tinker://a%2F..%2F../weights/x",
      "tinker://a/weights/..",
      "tinker://a/weights/.x",
      "tinker://a/weights/x/y",
      "tinker://a/b/weights/x",
      "tinker:///etc/weights/x",
      "tinker://a/sampler_weights/x",
      "tinker://a/weights/",
      "tinker://a/weights/x%00",
      "tinker://-a/weights/x",
      "tinker://a\\..\\b/weights/x",
      "file:///srv/weights/x",
      "/srv/x",
    ]) {
      expect(() => parseCheckpointPath(path, "path"), path).toThrow(/is not a tinker:\/\/<model>\/weights\/<name> path/);
    }
  });
});

/** Raw JSON over HTTP with a key. */
async function call(server: TinkerServer, key: string, route: string, body: unknown) {
  const response = await fetch(`${server.url}/api/v1/${route}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": key },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function settle(server: TinkerServer, key: string, requestId: unknown): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await call(server, key, "retrieve_future", { request_id: requestId });
    if (body.type !== "try_again") return body;
  }
}

const datum = {
  model_input: { chunks: [{ type: "encoded_text", tokens: [1, 2] }] },
  loss_fn_inputs: {
    target_tokens: { data: [2, 3], dtype: "int64" },
    logprobs: { data: [0, -1], dtype: "float32" },
    advantages: { data: [0, 1], dtype: "float32" },
  },
};

/** A session and a model of `key`'s, and a way to run its sequenced requests. */
async function modelOf(server: TinkerServer, key: string) {
  const session = (await call(server, key, "create_session", { tags: [] })).body.session_id as string;
  const created = await call(server, key, "create_model", { session_id: session, model_seq_id: 0, base_model: "table", lora_config: { rank: 0 } });
  await settle(server, key, created.body.request_id);
  const id = created.body.model_id as string;
  let seq = 0;
  const run = async (route: string, body: Record<string, unknown>) =>
    settle(server, key, (await call(server, key, route, { model_id: id, seq_id: ++seq, ...body })).body.request_id);
  const logprobs = async () =>
    ((await run("forward", { forward_input: { loss_fn: "importance_sampling", data: [datum] } })).loss_fn_outputs as { logprobs: { data: number[] } }[])[0]!
      .logprobs.data;
  return { id, run, logprobs };
}

describe("checkpoints on disk", () => {
  let parent: string;
  let root: string;
  let seed: number;
  const start = () =>
    startTinkerServer({ createBackend: () => new TableBackend(8, ++seed), checkpoints: tableCheckpoints(root), apiKey: [A, B], onError: () => undefined });

  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), "tinker-owned-"));
    root = join(parent, "root");
    await mkdir(root);
    seed = 0;
  });

  afterEach(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  it("keeps owner and weights info beside the files: after a restart the owner resumes, no other key can", async () => {
    const first = await start();
    let path: string;
    let before: number[];
    try {
      const model = await modelOf(first, A);
      before = await model.logprobs();
      path = (await model.run("save_weights", { path: "ckpt-1" })).path as string;
      expect(path).toBe(`tinker://${model.id}/weights/ckpt-1`);
      const record = JSON.parse(await readFile(join(root, model.id.replaceAll(":", "_"), "ckpt-1", RECORD_FILE), "utf8")) as Record<string, unknown>;
      expect(record.owner).toBe(`sha256:${createHash("sha256").update(A).digest("hex")}`);
    } finally {
      await first.close();
    }

    // A new process on the same folder: nothing of the first is in memory.
    const second = await start();
    try {
      const info = await call(second, A, "weights_info", { tinker_path: path });
      expect(info).toEqual({ status: 200, body: { base_model: "table", is_lora: false, train_unembed: true, train_mlp: true, train_attn: true } });
      const resumed = await modelOf(second, A);
      expect(await resumed.logprobs()).not.toEqual(before);
      const fresh = await modelOf(second, A);
      expect(await fresh.run("load_weights", { path, optimizer: true })).toMatchObject({ type: "load_weights" });
      expect(await fresh.logprobs()).toEqual(before);

      // Another key sees no such checkpoint, in the same words as a missing one.
      expect(await call(second, B, "weights_info", { tinker_path: path })).toEqual({
        status: 404,
        body: { detail: `weights_info: no checkpoint ${path} on this server`, code: "not_found" },
      });
      const other = await modelOf(second, B);
      expect(await other.run("load_weights", { path, optimizer: false })).toEqual({
        error: `load_weights: no checkpoint ${path} on this server`,
        category: "user",
      });
    } finally {
      await second.close();
    }
  });

  it("never reads outside its root: traversal is refused, a link out of the root too, and messages name no server path", async () => {
    // A checkpoint one level above the root, complete with a record, as an attacker would hope to reach.
    await mkdir(join(parent, "x"), { recursive: true });
    await writeFile(join(parent, "x", "weights.json"), JSON.stringify(new Array(64).fill(0)));
    const server = await start();
    try {
      const model = await modelOf(server, A);
      const traversal = await model.run("load_weights", { path: "tinker://../weights/x", optimizer: false });
      expect(traversal).toEqual({
        error:
          'load_weights: path: "tinker://../weights/x" is not a tinker://<model>/weights/<name> path (the model id may hold letters, digits, ".", "_", ":" and "-", starting with a letter or digit)',
        category: "user",
      });

      // A folder linked out of the root, holding a record that names the path and the caller.
      const outside = join(parent, "outside", "ckpt");
      await mkdir(outside, { recursive: true });
      await writeFile(join(outside, "weights.json"), JSON.stringify(new Array(64).fill(0)));
      const linkedPath = "tinker://linked/weights/ckpt";
      const owner = `sha256:${createHash("sha256").update(A).digest("hex")}`;
      const info = { base_model: "table", is_lora: false, train_unembed: true, train_mlp: true, train_attn: true };
      await writeFile(join(outside, RECORD_FILE), JSON.stringify({ tinker_path: linkedPath, owner, weights_info: info, saved_at: "2026-01-01T00:00:00Z" }));
      await symlink(join(parent, "outside"), join(root, "linked"));
      const linked = await modelOf(server, A);
      const out = await linked.run("load_weights", { path: linkedPath, optimizer: false });
      expect(out).toEqual({ error: `load_weights: ${linkedPath} does not name a checkpoint of this server`, category: "user" });
      expect(JSON.stringify(out)).not.toContain(parent);

      // A name that would climb out when saved is refused too.
      expect(await model.run("save_weights", { path: ".." })).toEqual({
        error: "save_weights: path: must contain only letters, digits, '_' and '-'",
        category: "user",
      });
      const missing = await model.run("load_weights", { path: `tinker://${model.id}/weights/none`, optimizer: false });
      expect(missing.category).toBe("user");
      expect(JSON.stringify(missing)).not.toContain(root);
    } finally {
      await server.close();
    }
  });
});
