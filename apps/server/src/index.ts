export { buildApp, isProtectedRoute, type App, type AppOptions } from "./app.js";
export { complete, rehearsalFor, type Completion, type CompletionContext, type EnvaceResponseFields } from "./completion.js";
export {
  fitRehearsalToContext,
  isLoopback,
  loadServerConfig,
  MIN_TOKEN_CHARS,
  parseServerConfig,
  parseTokenFile,
  readTokenFile,
  ServerConfig,
  ServerConfigError,
  tokenProblem,
  type ServerConfigInput,
} from "./config.js";
export { ApiError, badField, toApiError, type ApiErrorType, type ErrorBody } from "./errors.js";
export { LruStore, memoryScope, prefixKeys } from "./memory-store.js";
export { ServerMetrics } from "./metrics.js";
export { ChatCompletionRequest, EnvaceRequestFields, parseChatRequest, type ChatTurnRequest, type RequestLimits } from "./request.js";
export { choiceDeltas, toChoice, usageOf, type Choice, type ChoiceMessage, type ChunkChoice } from "./response.js";
export { upstreamProbe, type Readiness, type ReadinessProbe, type UpstreamProbeOptions } from "./ready.js";
export {
  checkpointContext,
  serve,
  servedModelName,
  serverTokens,
  startServer,
  ServeError,
  withUpstreamDefaults,
  type RunningServer,
  type ServeCommandOptions,
  type StartOptions,
} from "./serve.js";
