export { inferSample, MAX_ROUNDS, type CallRecord, type InferSampleOptions, type TurnRecord } from "./inference.js";
export {
  aggregate,
  nameCounts,
  prf,
  safeRatio,
  scoreSample,
  summarize,
  type Aggregate,
  type FinMcpSummary,
  type NameCounts,
  type PRF,
  type SampleScore,
  type ScoredSample,
} from "./metrics.js";
export { FinMcpPrediction, formatSummary, rescoreFile, runFinMcp, scorePredictions, type FinMcpEntry, type RunFinMcpOptions } from "./run.js";
export { FinMcpSampleRecord, goldToolNames, loadSamples, TASK_TYPES, toSample, userTurnIndices, type FinMcpSample, type TaskType } from "./sample.js";
