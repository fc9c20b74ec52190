export { fsyncDirectory, readableDirectory, recoverDirectory, replaceDirectory, writeFileAtomically } from "./atomic.js";
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
