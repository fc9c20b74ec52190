import type { TrainingBackend } from "@envace/training";
import { LoadWeightsRequest, SaveWeightsRequest } from "../wire.js";
import { CHECKPOINT_NAME, checkpointPath, parseCheckpointPath } from "./checkpoints.js";
import { TinkerApiError, type CheckpointStore, type WeightsInfo } from "./options.js";
import { parseBody } from "./requests.js";

/** What a checkpoint route needs of the model it addresses. */
export interface CheckpointModel {
  id: string;
  baseModel: string;
  loraRank: number | null;
  lora: { train_unembed: boolean; train_mlp: boolean; train_attn: boolean };
  owner: string;
  backend: Promise<TrainingBackend>;
}

function storeOf(store: CheckpointStore | undefined, route: string): CheckpointStore {
  if (!store) throw new TinkerApiError(400, "unsupported", `${route}: this server has no checkpoint store (start it with the checkpoints option)`);
  return store;
}

/** The not-found refusal for a checkpoint: the same whether it is missing or another caller's, and naming only its tinker:// path. */
function missing(route: string, path: string): TinkerApiError {
  return new TinkerApiError(404, "not_found", `${route}: no checkpoint ${path} on this server`);
}

/** `save_weights`: validated now, run in `seq_id` order. */
export function saveWeightsTask(store: CheckpointStore | undefined, model: CheckpointModel, body: unknown, seq: number): () => Promise<unknown> {
  const route = "save_weights";
  const request = parseBody(SaveWeightsRequest, body, route);
  const checkpoints = storeOf(store, route);
  const name = request.path ?? `checkpoint-${seq}`;
  if (!CHECKPOINT_NAME.test(name))
    throw new TinkerApiError(
      400,
      "invalid_request",
      `${route}: path: ${JSON.stringify(name.slice(0, 300))} is not a checkpoint name (letters, digits, "_" and "-", at most 255)`,
    );
  const key = { modelId: model.id, name };
  const path = checkpointPath(key);
  return async () => {
    const rank = model.loraRank ?? 0;
    const info: WeightsInfo = { base_model: model.baseModel, is_lora: rank > 0, ...(rank > 0 ? { lora_rank: rank } : {}), ...model.lora };
    await checkpoints.save(await model.backend, key, { tinker_path: path, owner: model.owner, weights_info: info, saved_at: new Date().toISOString() });
    return { path, type: "save_weights" };
  };
}

/** `load_weights`, allowed only as a model's first request: restores a checkpoint the caller owns. */
export function loadWeightsTask(
  store: CheckpointStore | undefined,
  model: CheckpointModel,
  body: unknown,
  seq: number,
  replace: (backend: TrainingBackend) => void,
): () => Promise<unknown> {
  const route = "load_weights";
  const request = parseBody(LoadWeightsRequest, body, route);
  if (seq !== 1)
    throw new TinkerApiError(400, "seq_out_of_range", `${route}: load_weights is allowed only as a model's first request (seq_id 1), got seq_id ${seq}`);
  const checkpoints = storeOf(store, route);
  const key = parseCheckpointPath(request.path, "path");
  const path = checkpointPath(key);
  return async () => {
    const record = await checkpoints.record(key);
    if (record?.owner !== model.owner) throw missing(route, path);
    replace(await checkpoints.load(await model.backend, key, { optimizer: request.optimizer }));
    return { path, model_id: model.id, type: "load_weights" };
  };
}

/** `weights_info`: what a checkpoint the caller owns was saved from, read from its record (so it outlives a restart). */
export async function weightsInfo(store: CheckpointStore | undefined, tinkerPath: string, owner: string): Promise<WeightsInfo> {
  const route = "weights_info";
  const checkpoints = storeOf(store, route);
  const key = parseCheckpointPath(tinkerPath, `${route}: tinker_path`);
  const record = await checkpoints.record(key);
  if (record?.owner !== owner) throw missing(route, checkpointPath(key));
  return record.weights_info;
}
