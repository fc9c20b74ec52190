import { readFile, realpath } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { readableDirectory, replaceDirectory, writeFileAtomically } from "@envace/records";
import type { TrainingBackend } from "@envace/training";
import { z } from "zod";
import { TinkerApiError, type CheckpointKey, type CheckpointStore } from "./options.js";

/** A model id as it may appear in a `tinker://` path: this server's ids and SkyRL tx's, never `.`, `..`, `/` or `%`. */
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
/** A checkpoint name, as SkyRL tx requires it. */
export const CHECKPOINT_NAME = /^[A-Za-z0-9_-]{1,255}$/;
/** The file beside a checkpoint's own files that says whose it is and what `weights_info` reports. */
export const RECORD_FILE = "tinker-checkpoint.json";

/** A `tinker://` path to training weights, as its parts. */
export function checkpointPath(key: CheckpointKey): string {
  return `tinker://${key.modelId}/weights/${key.name}`;
}

/**
 * The parts of `tinker://<model id>/weights/<name>`, each checked on its own: a model id of
 * letters, digits, `.`, `_`, `:` and `-` that starts with a letter or digit, the kind `weights`,
 * and a name of letters, digits, `_` and `-`. Nothing is decoded, so `%2e%2e` is refused as it is.
 */
export function parseCheckpointPath(path: string, field: string): CheckpointKey {
  const shape = `${field}: ${JSON.stringify(path.slice(0, 300))} is not a tinker://<model>/weights/<name> path`;
  if (!path.startsWith("tinker://")) throw new TinkerApiError(400, "invalid_request", shape);
  const parts = path.slice("tinker://".length).split("/");
  if (parts.length !== 3 || parts[1] !== "weights") throw new TinkerApiError(400, "invalid_request", shape);
  const [modelId, , name] = parts as [string, string, string];
  if (!MODEL_ID.test(modelId))
    throw new TinkerApiError(
      400,
      "invalid_request",
      `${shape} (the model id may hold letters, digits, ".", "_", ":" and "-", starting with a letter or digit)`,
    );
  if (!CHECKPOINT_NAME.test(name)) throw new TinkerApiError(400, "invalid_request", `${shape} (the name may hold letters, digits, "_" and "-")`);
  return { modelId, name };
}

/** How a backend writes its training state to a folder and is rebuilt from one. */
export interface FolderCheckpointIo {
  /** Write into `dir`, an empty folder. */
  save(backend: TrainingBackend, dir: string): Promise<void>;
  /** A backend restored from `dir` (it may be `previous` itself, or a new one that replaces it). */
  load(dir: string, options: { optimizer: boolean; previous: TrainingBackend }): Promise<TrainingBackend>;
}

const StoredRecord = z.object({
  tinker_path: z.string(),
  owner: z.string(),
  weights_info: z.object({
    base_model: z.string(),
    is_lora: z.boolean(),
    lora_rank: z.number().int().optional(),
    train_unembed: z.boolean(),
    train_mlp: z.boolean(),
    train_attn: z.boolean(),
  }),
  saved_at: z.string(),
});

/** A folder-safe version of an id (ids are checked first, so this only maps `:`). */
function safe(part: string): string {
  return part.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** `path` if it lies strictly inside `root`, else a refusal that names neither. */
function inside(root: string, path: string, key: CheckpointKey): string {
  if (!path.startsWith(root.endsWith(sep) ? root : root + sep)) {
    throw new TinkerApiError(400, "invalid_request", `${checkpointPath(key)} does not name a checkpoint of this server`);
  }
  return path;
}

/**
 * Checkpoints as folders `<root>/<model id>/<name>`, each with a record (`tinker-checkpoint.json`:
 * its path, owner and what `weights_info` reports), so `tinker://<model>/weights/<name>` paths,
 * their owners and their weights info survive a server restart. A checkpoint is written to a
 * temporary folder and swapped into place once complete (`replaceDirectory` of `@envace/records`); a path is resolved under the root and
 * checked after resolution (and after following links, where it exists). For the in-process backend:
 *
 * ```ts
 * folderCheckpoints(root, {
 *   save: (backend, dir) => (backend as InProcessBackend).saveCheckpoint(dir),
 *   load: (dir, { optimizer }) => InProcessBackend.load(dir, { optimizer }),
 * });
 * ```
 */
export function folderCheckpoints(root: string, io: FolderCheckpointIo): CheckpointStore {
  const base = resolve(root);
  const dirOf = (key: CheckpointKey) => {
    parseCheckpointPath(checkpointPath(key), "checkpoint");
    return inside(base, resolve(base, safe(key.modelId), key.name), key);
  };
  /** The folder of an existing checkpoint, links followed, or undefined when there is none. */
  const existing = async (key: CheckpointKey): Promise<string | undefined> => {
    // A save cut off mid-swap leaves the previous checkpoint beside the name (`@envace/records`).
    const dir = readableDirectory(dirOf(key));
    let real: string;
    try {
      real = await realpath(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    return inside(await realpath(base), real, key);
  };
  return {
    async save(backend, key, record) {
      // A checkpoint saved again under its name replaces the old one only once complete.
      await replaceDirectory(dirOf(key), async (tmp) => {
        await io.save(backend, tmp);
        writeFileAtomically(join(tmp, RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
      });
    },
    async record(key) {
      const dir = await existing(key);
      if (dir === undefined) return undefined;
      let text: string;
      try {
        text = await readFile(join(dir, RECORD_FILE), "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return undefined;
      }
      const parsed = StoredRecord.safeParse(json);
      // A record that does not name this very path (another id mapped to the same folder) is not its checkpoint.
      return parsed.success && parsed.data.tinker_path === checkpointPath(key) ? parsed.data : undefined;
    },
    async load(backend, key, options) {
      const dir = await existing(key);
      if (dir === undefined) throw new TinkerApiError(404, "not_found", `no checkpoint ${checkpointPath(key)}`);
      return io.load(dir, { ...options, previous: backend });
    },
  };
}
