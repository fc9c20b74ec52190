export {
  checklistPredicates,
  checklistReward,
  checklistRules,
  scoreChecklist,
  type ChecklistRule,
  type ChecklistScoreOptions,
  type TranscriptPredicate,
} from "./checklist.js";
export { toCm2Record } from "./cm2.js";
export { consistentReward, scoreConsistency } from "./consistent.js";
export { CorpusOptions, LEXICON_MAX_NUMBER, domainCorpus, vocabulary, wordsOf, type CorpusOptionsInput } from "./corpus.js";
export { BuiltinEnvironment, toToolResult } from "./environment.js";
export { toolExamples, type ToolExample } from "./examples.js";
export { executionResultText, toolCallText, toolContent, toolMessageText } from "./format.js";
export { GenerateOptions, generateTasks, randomWorld, worldSplit, type GenerateOptionsInput } from "./generate.js";
export { SftExample, goldTrajectory, renderPlain, type GoldTrajectory } from "./gold.js";
export { BuiltinMeta, DOMAIN_VERSION, Split, builtinMeta } from "./meta.js";
export { ITEM_NAMES, USER_NAMES } from "./names.js";
export { BUILTIN_REFLECT_INSTRUCTIONS, BUILTIN_REHEARSE_PROMPT, SYSTEM_PROMPT, SYSTEM_PROMPT_SHORT } from "./prompt.js";
export { Family, Outcome, Request } from "./request.js";
export { GOLD_CHAR_BUDGET, taskStats, type Spread, type TaskStats } from "./stats.js";
export { ErrorCode, Shop, TOOL_SPECS, ToolName, WRITE_TOOLS, type ShopResult } from "./tools.js";
export { mentions, transcriptOf, transcriptOfDialogue, type Transcript, type TranscriptCall } from "./transcript.js";
export { checkOutcome, outcomeReward, replayState, scoreTrajectory, type EpisodeOutcome } from "./verify.js";
export { Item, Order, OrderState, Rejection, User, World } from "./world.js";
