export { McpEnvironment, McpEpisodeError, type McpEnvironmentOptions } from "./environment.js";
export { contentOf, errorResultOf, McpToolErrorCode, resultOf, toolSpecOf } from "./results.js";
export {
  checkReach,
  describeServer,
  HttpServerSpec,
  isLoopbackAddress,
  isLoopbackUrl,
  McpServerSpec,
  RemoteServerRefused,
  StdioServerSpec,
  type McpServerSpecInput,
} from "./server-spec.js";
export { checkToolNames, DEFAULT_LIST_LIMITS, McpListLimitError, McpToolNameError, type ListLimits } from "./listing.js";
export { reachFetch, type ResolvedAddress, type Resolver } from "./reach.js";
export { listMcpTools, McpConnectError, openSession, type McpSession, type SessionOptions } from "./session.js";
