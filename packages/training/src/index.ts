export * from "./backend.js";
export { loadCheckpoint, saveCheckpoint, TrainingStateFile, type CheckpointContents, type HostAdamState, type LoadOptions } from "./checkpoint.js";
export { fromHfConfig, headDim, HfLlamaConfig, TinyModelConfig, toHfConfig, type TinyModelConfigInput } from "./config.js";
export {
  checkLlamaTensors,
  expectedLlamaTensors,
  LlamaConfig,
  llamaShape,
  llamaTensorNames,
  readLlamaConfig,
  type LlamaShape,
} from "./llama-config.js";
export { datumFromRow } from "./datum.js";
export { CheckpointError, NonFiniteGradientError, TrainingInputError, TrainingStateError } from "./errors.js";
export { createTinyModel, InProcessBackend, type CheckpointTokenizer, type InProcessBackendOptions } from "./in-process.js";
export { evaluateObjective, referenceLoss, type Objective } from "./objective.js";
export { countParameters, initParameters, parameterSpecs, type ParameterSpec, type Parameters } from "./parameters.js";
export { Rng, seededRandom } from "./rng.js";
export { decodeSafetensors, encodeSafetensors, halfToFloat, readSafetensors, SafetensorsError, writeSafetensors, type NamedTensor } from "./safetensors.js";
export { TinySampler, type TinySamplerOptions, type TokenListener } from "./sampler.js";
export { sampleToken, type SampledToken, type TokenSamplingParams } from "./sampling.js";
export { initWasmBackend } from "./wasm.js";
export { ByteLevelBpeTokenizer, DEFAULT_SPECIAL_TOKENS, DEFAULT_STOP_TOKENS, HfTokenizerJson, TokenizerError } from "./tokenizer.js";
export { trainTokenizer, type TrainTokenizerOptions } from "./train-tokenizer.js";
export { referenceLogits, referenceScores } from "./reference.js";
export { llamaReferenceLogits } from "./llama-reference.js";
export type { AttentionKernel } from "./transformer.js";
