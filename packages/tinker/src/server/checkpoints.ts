import { join } from "node:path";
import type { TrainingBackend } from "@envace/training";
import type { CheckpointKey, CheckpointStore } from "./options.js";

/** How a backend writes its training state to a folder and is rebuilt from one. */
export interface FolderCheckpointIo {
  save(backend: TrainingBackend, dir: string): Promise<void>;
  /** A backend restored from `dir` (it may be `previous` itself, or a new one that replaces it). */
  load(dir: string, options: { optimizer: boolean; previous: TrainingBackend }): Promise<TrainingBackend>;
}

/** A folder-safe version of an id: letters, digits, `.`, `_` and `-` only. */
function safe(part: string): string {
  return part.replace(/[^A-Za-z0-9._-]/g, "_");
}

/**
 * Checkpoints as folders `<root>/<model id>/<name>`, so `tinker://<model>/weights/<name>` paths
 * survive a server restart. For the in-process backend:
 *
 * ```ts
 * folderCheckpoints(root, {
 *   save: (backend, dir) => (backend as InProcessBackend).saveCheckpoint(dir),
 *   load: (dir, { optimizer }) => InProcessBackend.load(dir, { optimizer }),
 * });
 * ```
 */
export function folderCheckpoints(root: string, io: FolderCheckpointIo): CheckpointStore {
  const dir = (key: CheckpointKey) => join(root, safe(key.modelId), safe(key.name));
  return {
    save: (backend, key) => io.save(backend, dir(key)),
    load: (backend, key, options) => io.load(dir(key), { ...options, previous: backend }),
  };
}
