export { buildDb, VITA_DOMAINS, VitaDb, type VitaDomain } from "./db.js";
export { DOMAIN_TOOLS, replayCalls, toolSpec, VitaEnvironment, type ReplayResult } from "./environment.js";
export { defaultProcess, partialRatio, ratio, rerank, type Ranked } from "./fuzz.js";
export { chinaHoliday } from "./holidays.js";
export { loadVitaTasks, newDb, parseVitaTasks, resolveTasksFile, VitaEvaluationCriteria, VitaExpectedState, VitaTaskFields, type VitaTask } from "./task.js";
export { respond, type VitaResponse, type VitaTool } from "./toolkit.js";
export { readReplayFile, ReplayEntry, replayFile, ReplayLine, type ReplayOptions, type ReplayRequest, type ReplaySummary } from "./replay.js";
export { AGENT_SYSTEM_PROMPT, agentSystemPrompt, agentTime, STOP_MARKER, toProtocolTask } from "./protocol-task.js";
export {
  evaluateTrial,
  formatWindow,
  initialRubrics,
  parseWindowVerdict,
  slidingWindows,
  WINDOW_OVERLAP,
  WINDOW_RESPONSE_FORMAT,
  WINDOW_SIZE,
  WindowVerdict,
  windowSystemPrompt,
  windowUserPrompt,
  type EvaluateOptions,
  type RubricState,
  type VitaJudge,
  type VitaMessage,
  type VitaTermination,
  type VitaVerdict,
} from "./evaluate.js";
export { averageAtK, passAtK, vitaMetrics, type VitaMetrics, type VitaTrial } from "./metrics.js";
export { conversationOf, FIRST_AGENT_MESSAGE, openAiJudge, runVita, userSystemPrompt, VitaRunEntry, type RunVitaOptions, type VitaSummary } from "./run.js";
export { USER_SYSTEM_PROMPT } from "./user-prompt.js";
