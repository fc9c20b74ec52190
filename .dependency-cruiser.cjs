// dependency-cruiser's configuration: the layering rules of ARCHITECTURE.md (see tooling/dependency-rules/index.cjs).
module.exports = require("./tooling/dependency-rules/index.cjs").configFor(__dirname);
