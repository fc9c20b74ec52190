import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { folderCheckpoints } from "../server/checkpoints.js";
import type { CheckpointStore, TinkerServerOptions } from "../server/options.js";
import { TableBackend } from "./table-backend.js";

/**
 * The server the SDK fixtures were recorded against (`record-sdk.ts`), so a test can replay them
 * and get the same answers: table models of 16 tokens (15 ends a sample) numbered by creation,
 * samplers that score prompts, and checkpoints as JSON files under `root`.
 */
function asTable(backend: unknown): TableBackend {
  if (!(backend instanceof TableBackend)) throw new Error("expected a TableBackend");
  return backend;
}

/** Checkpoints of table models as JSON files, a folder per model and name under `root`. */
export function tableCheckpoints(root: string): CheckpointStore {
  return folderCheckpoints(root, {
    save: async (backend, dir) => {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "weights.json"), JSON.stringify(asTable(backend).exportWeights()));
    },
    load: async (dir, { previous }) => {
      asTable(previous).importWeights(JSON.parse(await readFile(join(dir, "weights.json"), "utf8")) as number[]);
      return previous;
    },
  });
}

export function sdkFixtureServerOptions(root: string, options: { zstd?: boolean } = {}): TinkerServerOptions {
  let seed = 0;
  return {
    createBackend: () => new TableBackend(16, ++seed, { eos: 15, scoresPrompts: true }),
    baseModels: ["table"],
    seqGapTimeoutMs: 5_000,
    compressForwardBackward: options.zstd ?? false,
    checkpoints: tableCheckpoints(root),
  };
}
