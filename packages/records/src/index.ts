export { canonicalJson, contentHash, sha256Hex } from "./canonical.js";
export {
  describeTornLine,
  JsonLinesFile,
  parseJsonLines,
  readJsonLines,
  writeFileAtomically,
  type JsonLinesFileOptions,
  type JsonLinesOptions,
  type TornLine,
} from "./json-lines.js";
