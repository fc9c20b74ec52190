export {
  capabilitiesOf,
  detectServer,
  ServerKind,
  trainingGaps,
  type DetectedServer,
  type ServerCapabilities,
  type TokenRoute,
} from "./openai/capabilities.js";
export { OpenAIChatPolicy, type OpenAIChatPolicyOptions } from "./openai/chat-policy.js";
export { streamChat } from "./openai/chat-stream.js";
export { TokenDataUnavailableError } from "./openai/errors.js";
export { OnnxModelError } from "./onnx/errors.js";
export { ServerConnection, type ServerConnectionOptions } from "./openai/client.js";
export { ServerTokenSampler, type ServerTokenSamplerOptions } from "./openai/token-sampler.js";
export { ModelCapabilityError, type TokenDataMode } from "./openai/wire.js";

export { OnnxCausalLM, MODEL_FILES, type ForwardResult, type KvCache, type OnnxSessionOptions } from "./onnx/causal-lm.js";
export { exportLlamaCheckpoint, llamaOnnxBytes, type ExportResult } from "./onnx/export.js";
export { loadOnnxModel, type LoadOnnxOptions, type OnnxModel } from "./onnx/policy.js";
export { OnnxSampler, type OnnxSamplerOptions } from "./onnx/sampler.js";
export { StreamedTextMismatchError, StreamingSamplerPolicy, type TokenStreamingSampler } from "./onnx/streaming-policy.js";
export { TokenTextStream } from "./onnx/text-stream.js";

export { ModelSpecError, parseModelSpec, policyFromSpec, type ModelSpec, type ResolvedModel, type ResolveOptions } from "./spec.js";
export { TinyOnnxEngine, type WeightSyncTiming } from "./tiny/onnx-sync.js";
export { TINY_CHAT_TEMPLATE, TINY_COMPACT_CHAT_TEMPLATE } from "./tiny/chat-template.js";
export { loadTinyModel, type LoadTinyOptions, type TinyModel } from "./tiny/tiny.js";
