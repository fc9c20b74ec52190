import { z } from "zod";

/**
 * The JSON wire format of the Tinker training protocol (the shapes SDK versions up to 0.24 send
 * and SkyRL tx accepts), in snake_case as on the wire. Requests are parsed leniently (unknown
 * keys are dropped); replies are parsed loosely (servers add fields).
 */

const TokenId = z.number().int().nonnegative();
const SeqId = z.number().int().positive();

/**
 * The numbers of a tensor: a JSON array, or a typed array as the protobuf decoder gives them (a
 * view of the body's bytes, not a copy; int64 values as a Float64Array). Typed arrays are checked
 * by whoever reads their values (`fromWireDatum`), not element by element here.
 */
export const NumericArray = z.union([
  z.array(z.number()),
  z.custom<Float32Array | Float64Array | Int32Array>(
    (v) => v instanceof Float32Array || v instanceof Float64Array || v instanceof Int32Array,
    "expected an array of numbers",
  ),
]);
export type NumericArray = z.infer<typeof NumericArray>;

/** Token ids: a JSON array, or the Int32Array the protobuf decoder gives (checked here, in one pass). */
export const TokenIds = z.union([
  z.array(TokenId),
  z
    .custom<Int32Array>((v) => v instanceof Int32Array, "expected an array of token ids")
    .refine((ids) => ids.every((id) => id >= 0), "token ids must be non-negative"),
]);
export type TokenIds = z.infer<typeof TokenIds>;

/** A flattened tensor. Only dense 1-D tensors are supported here. */
export const TensorData = z.object({
  data: NumericArray,
  dtype: z.enum(["int64", "float32"]).optional(),
  shape: z.array(z.number().int().nonnegative()).optional(),
  sparse_crow_indices: NumericArray.optional(),
  sparse_col_indices: NumericArray.optional(),
});
export type TensorData = z.infer<typeof TensorData>;

/** A tensor of a result (`loss_fn_outputs`): plain numbers. */
export const OutputTensor = TensorData.extend({ data: z.array(z.number()) });
export type OutputTensor = z.infer<typeof OutputTensor>;

export const EncodedTextChunk = z.object({ type: z.literal("encoded_text"), tokens: TokenIds });
export type EncodedTextChunk = z.infer<typeof EncodedTextChunk>;

/** Chunk kinds the protocol defines that carry no token ids (images, audio). */
export const MediaChunk = z.looseObject({ type: z.enum(["image", "image_asset_pointer", "dmel"]) });

export const ModelInput = z.object({ chunks: z.array(z.discriminatedUnion("type", [EncodedTextChunk, MediaChunk])) });
export type ModelInput = z.infer<typeof ModelInput>;

export const WireDatum = z.object({
  model_input: ModelInput,
  loss_fn_inputs: z.record(z.string(), TensorData),
});
export type WireDatum = z.infer<typeof WireDatum>;

/** `loss_fn_config` values are numbers for Tinker's losses; the EnvACE extension also sends a string. */
export const LossFnConfig = z.record(z.string(), z.union([z.number(), z.string()])).nullable();
export type LossFnConfig = z.infer<typeof LossFnConfig>;

export const ForwardBackwardInput = z.object({
  data: z.array(WireDatum).min(1),
  loss_fn: z.string().min(1),
  loss_fn_config: LossFnConfig.optional(),
});
export type ForwardBackwardInput = z.infer<typeof ForwardBackwardInput>;

/** Every request that runs against a training model carries its id and its sequence number. */
export const ModelRequest = z.object({ model_id: z.string().min(1), seq_id: SeqId });
export type ModelRequest = z.infer<typeof ModelRequest>;

export const ForwardBackwardRequest = ModelRequest.extend({ forward_backward_input: ForwardBackwardInput });
export type ForwardBackwardRequest = z.infer<typeof ForwardBackwardRequest>;

export const ForwardRequest = ModelRequest.extend({ forward_input: ForwardBackwardInput });
export type ForwardRequest = z.infer<typeof ForwardRequest>;

export const WireAdamParams = z.object({
  learning_rate: z.number().min(0).default(1e-4),
  beta1: z.number().min(0).lt(1).default(0.9),
  beta2: z.number().min(0).lt(1).default(0.95),
  eps: z.number().positive().default(1e-12),
  weight_decay: z.number().min(0).default(0),
  grad_clip_norm: z.number().min(0).default(0),
});
export type WireAdamParams = z.infer<typeof WireAdamParams>;

export const OptimStepRequest = ModelRequest.extend({ adam_params: WireAdamParams });
export type OptimStepRequest = z.infer<typeof OptimStepRequest>;

/** Checkpoint names: what SkyRL tx accepts, so one name works on every server. */
export const CheckpointName = z
  .string()
  .regex(/^[A-Za-z0-9_-]+$/, "must contain only letters, digits, '_' and '-'")
  .max(255);

export const SaveWeightsRequest = ModelRequest.extend({
  path: CheckpointName.optional(),
  ttl_seconds: z.number().int().positive().nullable().optional(),
  overwrite: z.boolean().optional(),
});
export type SaveWeightsRequest = z.infer<typeof SaveWeightsRequest>;

export const SaveWeightsForSamplerRequest = ModelRequest.extend({
  path: CheckpointName.optional(),
  sampling_session_seq_id: z.number().int().nonnegative().optional(),
  ttl_seconds: z.number().int().positive().nullable().optional(),
});
export type SaveWeightsForSamplerRequest = z.infer<typeof SaveWeightsForSamplerRequest>;

export const LoadWeightsRequest = ModelRequest.extend({
  path: z.string().min(1),
  optimizer: z.boolean().default(false),
});
export type LoadWeightsRequest = z.infer<typeof LoadWeightsRequest>;

export const CreateSessionRequest = z.object({
  tags: z.array(z.string()).default([]),
  user_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  sdk_version: z.string().optional(),
  project_id: z.string().optional(),
});
export type CreateSessionRequest = z.infer<typeof CreateSessionRequest>;

export const SessionRequest = z.object({ session_id: z.string().min(1) });

export const LoraConfig = z.object({
  rank: z.number().int().nonnegative(),
  seed: z.number().int().optional(),
  train_unembed: z.boolean().default(true),
  train_mlp: z.boolean().default(true),
  train_attn: z.boolean().default(true),
});
export type LoraConfig = z.infer<typeof LoraConfig>;

export const CreateModelRequest = z.object({
  session_id: z.string().min(1),
  model_seq_id: z.number().int().nonnegative(),
  base_model: z.string().min(1),
  lora_config: LoraConfig.optional(),
  user_metadata: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type CreateModelRequest = z.infer<typeof CreateModelRequest>;

export const ModelIdRequest = z.object({ model_id: z.string().min(1) });

export const CreateSamplingSessionRequest = z
  .object({
    session_id: z.string().min(1),
    sampling_session_seq_id: z.number().int().nonnegative(),
    base_model: z.string().min(1).optional(),
    model_path: z.string().min(1).optional(),
  })
  .refine((r) => (r.base_model === undefined) !== (r.model_path === undefined), {
    error: "give exactly one of base_model and model_path",
    path: ["model_path"],
  });
export type CreateSamplingSessionRequest = z.infer<typeof CreateSamplingSessionRequest>;

export const WireSamplingParams = z.object({
  max_tokens: z.number().int().positive(),
  seed: z.number().int().nullable().optional(),
  stop: z
    .union([z.array(z.string()), z.array(TokenId)])
    .nullable()
    .optional(),
  temperature: z.number().min(0).default(1),
  top_k: z.number().int().min(-1).default(-1),
  top_p: z.number().gt(0).max(1).default(1),
});
export type WireSamplingParams = z.infer<typeof WireSamplingParams>;

export const SampleRequest = z.object({
  sampling_session_id: z.string().min(1).optional(),
  base_model: z.string().min(1).optional(),
  model_path: z.string().min(1).optional(),
  seq_id: z.number().int().nonnegative().optional(),
  num_samples: z.number().int().positive().max(1024).default(1),
  prompt: ModelInput,
  sampling_params: WireSamplingParams,
  prompt_logprobs: z.boolean().default(false),
  topk_prompt_logprobs: z.number().int().nonnegative().default(0),
});
export type SampleRequest = z.infer<typeof SampleRequest>;

export const WeightsInfoRequest = z.object({ tinker_path: z.string().min(1) });

export const RetrieveFutureRequest = z.object({
  request_id: z.union([z.string().min(1), z.number().int()]).transform(String),
  allow_metadata_only: z.boolean().default(false),
});
export type RetrieveFutureRequest = z.infer<typeof RetrieveFutureRequest>;

// Replies.

export const UntypedFuture = z.looseObject({
  request_id: z.union([z.string().min(1), z.number().int()]).transform(String),
  model_id: z.string().optional(),
});
export type UntypedFuture = z.infer<typeof UntypedFuture>;

export const TryAgain = z.looseObject({ type: z.literal("try_again") });
export const MetadataOnly = z.looseObject({ status: z.literal("complete_metadata") });
export const FailedFuture = z.looseObject({
  error: z.string(),
  category: z.enum(["unknown", "server", "user"]).catch("unknown").default("unknown"),
});

export const ForwardBackwardOutput = z.looseObject({
  loss_fn_output_type: z.string().optional(),
  loss_fn_outputs: z.array(z.looseObject({ logprobs: OutputTensor })),
  metrics: z.record(z.string(), z.number()).default({}),
});
export type ForwardBackwardOutput = z.infer<typeof ForwardBackwardOutput>;

export const OptimStepResponse = z.looseObject({ metrics: z.record(z.string(), z.number()).nullable().optional() });
export const SaveWeightsResponse = z.looseObject({ path: z.string().min(1) });
export const SaveWeightsForSamplerResponse = z.looseObject({
  path: z.string().nullable().optional(),
  sampling_session_id: z.string().nullable().optional(),
});
export const LoadWeightsResponse = z.looseObject({ path: z.string().nullable().optional() });
export const CreateModelResponse = z.looseObject({ model_id: z.string().min(1) });
export const UnloadModelResponse = z.looseObject({ model_id: z.string().optional() });
export const CreateSessionResponse = z.looseObject({
  session_id: z.string().min(1),
  info_message: z.string().nullable().optional(),
  warning_message: z.string().nullable().optional(),
  error_message: z.string().nullable().optional(),
});
export const CreateSamplingSessionResponse = z.looseObject({ sampling_session_id: z.string().min(1) });

export const SampledSequence = z.looseObject({
  stop_reason: z.enum(["stop", "length"]),
  tokens: z.array(TokenId),
  logprobs: z.array(z.number()).nullable().optional(),
});
export const SampleResponse = z.looseObject({
  sequences: z.array(SampledSequence),
  /** One entry per prompt token with the first null (nothing predicts it); SkyRL tx leaves the null out. */
  prompt_logprobs: z.array(z.number().nullable()).nullable().optional(),
  /** Per prompt position, up to k [token id, log-probability] pairs, or null; same two shapes. */
  topk_prompt_logprobs: z
    .array(z.array(z.tuple([TokenId, z.number()])).nullable())
    .nullable()
    .optional(),
});
export type SampleResponse = z.infer<typeof SampleResponse>;

export const GetInfoResponse = z.looseObject({
  model_id: z.string(),
  model_data: z.looseObject({ model_name: z.string().nullable().optional(), tokenizer_id: z.string().nullable().optional() }).optional(),
  is_lora: z.boolean().nullable().optional(),
  lora_rank: z.number().nullable().optional(),
  model_name: z.string().nullable().optional(),
});
export type GetInfoResponse = z.infer<typeof GetInfoResponse>;

export const ServerCapabilities = z.looseObject({
  supported_models: z.array(z.looseObject({ model_name: z.string().nullable().optional(), max_context_length: z.number().nullable().optional() })),
});
export type ServerCapabilities = z.infer<typeof ServerCapabilities>;

/**
 * `/client/config` feature flags the client reads. `envace_loss_fns` is this project's
 * extension: losses the server implements beyond Tinker's own (hosted Tinker and SkyRL tx do not
 * send it).
 */
export const ClientConfig = z.looseObject({
  pjwt_auth_enabled: z.boolean().default(false),
  fwdbwd_max_chunk_len: z.number().int().positive().default(1024),
  fwdbwd_max_chunk_bytes_count: z.number().int().positive().default(5_000_000),
  envace_loss_fns: z.array(z.string()).default([]),
  /** This project's extension: how the server reduces Tinker's losses (hosted Tinker and SkyRL tx do not say). */
  envace_loss_reduction: z.enum(["sum", "datum-token-mean"]).optional(),
});
export type ClientConfig = z.infer<typeof ClientConfig>;

export const AuthTokenResponse = z.looseObject({ jwt: z.string().min(1) });
