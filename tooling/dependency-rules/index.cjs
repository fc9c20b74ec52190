// The layering rules of ARCHITECTURE.md, enforced: the `dependency-rules` block there is the one
// place they are written; this file turns each line into a dependency-cruiser rule.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

/** `name: dep dep …` lines of the block, as a map from package (or app) name to what it may import. */
function readRules(architecture) {
  const block = /```text dependency-rules\n([\s\S]*?)```/.exec(architecture);
  if (!block) throw new Error("ARCHITECTURE.md: no ```text dependency-rules block");
  const rules = new Map();
  for (const line of block[1].split("\n")) {
    if (line.trim() === "") continue;
    const match = /^([a-z0-9-]+):((?: [a-z0-9-]+)*)\s*$/.exec(line);
    if (!match) throw new Error(`ARCHITECTURE.md: dependency rule line not understood: ${JSON.stringify(line)}`);
    rules.set(match[1], match[2].trim() === "" ? [] : match[2].trim().split(" "));
  }
  return rules;
}

const APPS = new Set(["server", "trainer"]);
const folderOf = (name) => (APPS.has(name) ? `apps/${name}` : `packages/${name}`);
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
// Tests, benches and test helpers may use their package's development dependencies as well.
const TEST_FILES = "(\\.test\\.ts|\\.bench\\.ts|/testing/|/fixtures/)";

function layeringRules(rules) {
  return [...rules].map(([name, allowed]) => {
    const self = folderOf(name);
    const others = [name, ...allowed].map((dep) => `${escape(folderOf(dep))}/`).join("|");
    return {
      name: `layers:${name}`,
      comment: `${self} may import only ${allowed.length === 0 ? "nothing of ours" : allowed.join(", ")} (ARCHITECTURE.md)`,
      severity: "error",
      from: { path: `^${escape(self)}/src/`, pathNot: TEST_FILES },
      to: { path: "^(packages|apps)/[^/]+/", pathNot: `^(${others})` },
    };
  });
}

/** The dependency-cruiser configuration for the repository at `root` (its ARCHITECTURE.md and tsconfig.json). */
function configFor(root) {
  const rules = readRules(readFileSync(join(root, "ARCHITECTURE.md"), "utf8"));
  return {
    forbidden: [
      ...layeringRules(rules),
      {
        name: "no-app-imports",
        comment: "packages never import an app",
        severity: "error",
        from: { path: "^packages/" },
        to: { path: "^apps/" },
      },
      {
        name: "no-cycles",
        severity: "error",
        from: { path: "^(packages|apps)/" },
        // A cycle through type-only imports costs nothing at run time; one through values does.
        to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
      },
      {
        name: "no-relative-reach",
        comment: "another package is imported by its name (@envace/…), never by a relative path into its files",
        severity: "error",
        from: { path: "^(packages|apps)/([^/]+)/" },
        to: { path: "^(packages|apps)/[^/]+/", pathNot: "^$1/$2/", dependencyTypes: ["local"] },
      },
      {
        name: "declared-only",
        comment: "every imported package is declared in the importing package's package.json",
        severity: "error",
        from: { path: "^(packages|apps)/" },
        to: { dependencyTypes: ["npm-no-pkg", "npm-unknown"] },
      },
      {
        name: "not-unresolvable",
        severity: "error",
        from: { path: "^(packages|apps)/" },
        to: { couldNotResolve: true },
      },
    ],
    options: {
      doNotFollow: { path: "node_modules" },
      exclude: { path: "(^|/)(node_modules|dist|\\.turbo|test-artifacts)/" },
      includeOnly: "^(packages|apps)/[^/]+/src/",
      tsPreCompilationDeps: true,
      combinedDependencies: false,
      tsConfig: { fileName: join(root, "tsconfig.json") },
      enhancedResolveOptions: {
        conditionNames: ["@envace/source", "import", "node", "default"],
        exportsFields: ["exports"],
        extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
      },
      reporterOptions: { text: { highlightFocused: true } },
    },
  };
}

module.exports = { configFor, readRules };
