export { McpEnvironment, McpEpisodeError, type McpEnvironmentOptions } from "./environment.js";
export { contentOf, errorResultOf, McpToolErrorCode, resultOf, toolSpecOf } from "./results.js";
export { checkReach, describeServer, HttpServerSpec, isLoopbackUrl, McpServerSpec, RemoteServerRefused, StdioServerSpec, type McpServerSpecInput } from "./server-spec.js";
export { listMcpTools, McpConnectError, openSession, type McpSession, type SessionOptions } from "./session.js";
