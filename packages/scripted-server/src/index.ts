export { startScriptedServer } from "./server.js";
export type { RecordedRequest, Script, ScriptedServer, ScriptedServerOptions } from "./server.js";
export { reply, ScriptError, tokensOf } from "./reply.js";
export type {
  DelayReply,
  DropReply,
  ErrorReply,
  GenerateReply,
  JsonReply,
  MalformedReply,
  Reply,
  ScriptedChoice,
  ScriptedToken,
  ScriptedToolCall,
} from "./reply.js";
export type { Dialect } from "./render.js";
