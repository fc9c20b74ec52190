export * from "./categories.js";
export { bfclRules, checkAst, languageOf, matchModeOf } from "./checker/ast.js";
export type { AnswerCall, AstCheckOptions, AstVerdict, FunctionDocLike, ParamDoc } from "./checker/ast.js";
export { convertJava, parseJavaValue } from "./checker/java.js";
export { convertJavaScript, parseJavaScriptValue } from "./checker/javascript.js";
export { GORILLA_TO_JSON_SCHEMA, JAVA_TYPES, JAVASCRIPT_TYPES, PYTHON_TYPES, pythonTypeFor } from "./checker/types.js";
export type { Language } from "./checker/types.js";
export { checkDict, checkList, checkListOfDicts, checkString, standardize } from "./checker/values.js";
export { BfclDataError } from "./errors.js";
export { ChatMessage, countEntries, FUNC_DOC_FILES, FunctionDoc, hasCategory, loadCategory, ParamSchema } from "./data.js";
export type { Entry, HeldOutFunctions, MultiTurnEntry, SingleTurnEntry } from "./data.js";
export {
  DecodeError,
  decodeCallObject,
  decodeJavaLikeCalls,
  decodeMultiTurnStep,
  decodePythonCalls,
  decodePythonExecution,
  decodeSingleTurnResult,
  executionList,
  functionCallExecutionList,
  OutputFormatError,
  resolveValue,
} from "./decode.js";
export type { DecodedCall } from "./decode.js";
export { decodeMultiTurnResult, evaluateBfcl, readResults } from "./evaluate.js";
export type { BfclEvalOptions, BfclEvalReport, OutputSource } from "./evaluate.js";
export { inferMultiTurn, inferSingleTurn, MAXIMUM_STEP_LIMIT, rawResult } from "./inference.js";
export type { InferenceMode, InferenceOptions, MultiTurnInference } from "./inference.js";
export { checkMultiTurn, oracleMultiTurnCalls } from "./multi-turn/checker.js";
export type { ExecutedCall, MultiTurnCalls, MultiTurnCheckOptions, MultiTurnVerdict } from "./multi-turn/checker.js";
export { BfclEnvironment } from "./multi-turn/environment.js";
export type { LongContextFiller, Method, Param, Session } from "./multi-turn/environment.js";
export { defaultLongContextSource, FILLER_NAMES, loadLongContextFiller, parseLongContextModule } from "./multi-turn/long-context.js";
export { createSession, ENVIRONMENT_CLASSES, EnvironmentSet, EXECUTION_ERROR_PREFIX, resultString } from "./multi-turn/runtime.js";
export { oracleCalls } from "./oracle.js";
export { additionalFunctionsPrompt, ADDITIONAL_FUNCTIONS_PROMPT, systemPrompt, toolNameOf, toTools, withLanguageHints } from "./prompts.js";
export { parsePyJson } from "./py/json.js";
export { PythonRandom } from "./py/random.js";
export { parseExpression, PySyntaxError } from "./py/syntax.js";
export type { Expr } from "./py/syntax.js";
export { decodeSingleTurnOutput, scoreSingleTurn } from "./score.js";
export type { EntryVerdict, SingleTurnOutput } from "./score.js";
export { CategoryScore, categoryScore, GroupScore, OVERALL_WEIGHTS, percent, Summary, summarize, summaryTable } from "./summary.js";
