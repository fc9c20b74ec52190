export { fsyncDirectory, readableDirectory, recoverDirectory, replaceDirectory, writeFileAtomically } from "./atomic.js";
export { describeResume, EvalRun, optionDifferences, readRun, RUN_FILES, RunDirectoryError, type EvalRunSpec, type RunProgress } from "./eval-run.js";
export { canonicalJson, contentHash, sha256Hex } from "./canonical.js";
export {
  describeTornLine,
  JsonLinesFile,
  parseJsonLines,
  readJsonLines,
  type JsonLinesFileOptions,
  type JsonLinesOptions,
  type OwnJsonLinesOptions,
  type TornLine,
  type UserJsonLinesOptions,
} from "./json-lines.js";
export { parsePyJsonLine, parsePyJsonText, readPyJsonFile } from "./py-json.js";
export { readText } from "./read-text.js";
