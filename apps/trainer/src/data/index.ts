export { cm2Domain, loadCm2Split, type Cm2DomainOptions } from "./cm2.js";
export { DataError, RowError } from "./errors.js";
export { domainFromConfig } from "./from-config.js";
export { actText, executionResultText, referenceGold, toolCallBlock, toolResultOf, type FieldProblem, type ReferenceGold } from "./gold.js";
export { checklistJudgeFromConfig, type JudgeSection } from "./judge.js";
export { checkRecords, recordCorpus, recordDomain, splitOf, type DataDomain, type RecordDomainOptions, type SourcedRecord, type Split } from "./records.js";
export { loadVerlSplit, readVerlRecords, verlDomain, verlField, type VerlDomainOptions, type VerlReadOptions } from "./verl.js";
