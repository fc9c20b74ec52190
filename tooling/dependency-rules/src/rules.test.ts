import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}
interface Rules {
  configFor(root: string): { forbidden: unknown[]; options: Record<string, unknown> };
  readRules(architecture: string): Map<string, string[]>;
}

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");
const require = createRequire(import.meta.url);
const { configFor, readRules } = require("../index.cjs") as Rules;

/**
 * A two-package workspace in a temporary folder, laid out like ours: `packages/<name>/src`, each
 * package linked under `node_modules/@envace/` with the `@envace/source` export condition.
 */
function workspace(files: Record<string, string>, rules: string): string {
  const root = mkdtempSync(join(tmpdir(), "envace-layers-"));
  writeFileSync(join(root, "ARCHITECTURE.md"), `# Layers\n\n\`\`\`text dependency-rules\n${rules}\`\`\`\n`);
  writeFileSync(join(root, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", strict: true } }));
  for (const name of ["errors", "protocol", "grpo"]) {
    const folder = join(root, "packages", name);
    mkdirSync(join(folder, "src"), { recursive: true });
    writeFileSync(
      join(folder, "package.json"),
      JSON.stringify({ name: `@envace/${name}`, type: "module", exports: { ".": { "@envace/source": "./src/index.ts" } } }),
    );
    mkdirSync(join(root, "node_modules", "@envace"), { recursive: true });
    symlinkSync(folder, join(root, "node_modules", "@envace", name), "dir");
  }
  for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
  return root;
}

async function violations(root: string): Promise<Violation[]> {
  const { cruise } = await import("dependency-cruiser");
  const config = configFor(root);
  const previous = process.cwd();
  // dependency-cruiser reports paths relative to the working directory, which the rules match.
  process.chdir(root);
  try {
    const result = await cruise(["packages"], { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } } as never);
    const output = result.output as { summary: { violations: Violation[] } };
    return output.summary.violations;
  } finally {
    process.chdir(previous);
  }
}

const RULES = "errors:\nprotocol: errors\ngrpo: errors protocol\n";
const CLEAN = {
  "packages/errors/src/index.ts": "export const base = 1;\n",
  "packages/protocol/src/index.ts": 'import { base } from "@envace/errors";\nexport const protocol = base + 1;\n',
  "packages/grpo/src/index.ts": 'import { protocol } from "@envace/protocol";\nexport const grpo = protocol + 1;\n',
};

describe("the layering rules of ARCHITECTURE.md", () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  it("pass a workspace whose imports point down the layers", async () => {
    const root = workspace(CLEAN, RULES);
    roots.push(root);
    expect(await violations(root)).toEqual([]);
  });

  it("fail a wrong-way import, naming the rule and both files", async () => {
    const root = workspace({ ...CLEAN, "packages/protocol/src/wrong.ts": 'import { grpo } from "@envace/grpo";\nexport const wrong = grpo;\n' }, RULES);
    roots.push(root);
    const found = await violations(root);
    expect(found.map((v) => [v.rule.name, v.from, v.to])).toContainEqual(["layers:protocol", "packages/protocol/src/wrong.ts", "packages/grpo/src/index.ts"]);
  });

  it("fail a relative path into another package's files", async () => {
    const root = workspace(
      { ...CLEAN, "packages/grpo/src/reach.ts": 'import { base } from "../../errors/src/index.ts";\nexport const reach = base;\n' },
      RULES,
    );
    roots.push(root);
    const found = await violations(root);
    expect(found.map((v) => [v.rule.name, v.from])).toContainEqual(["no-relative-reach", "packages/grpo/src/reach.ts"]);
  });

  it("name every workspace package with the dependencies its package.json declares", () => {
    const rules = readRules(readFileSync(join(repoRoot, "ARCHITECTURE.md"), "utf8"));
    for (const [name, allowed] of rules) {
      const folder = ["server", "trainer"].includes(name) ? `apps/${name}` : `packages/${name}`;
      const manifest = JSON.parse(readFileSync(join(repoRoot, folder, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      };
      const declared = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })
        .filter((dep) => dep.startsWith("@envace/"))
        .map((dep) => dep.slice("@envace/".length))
        .sort();
      expect([name, declared]).toEqual([name, [...allowed].sort()]);
    }
  });

  it("cover every package and app of the workspace, and so does the root README's table", () => {
    const rules = readRules(readFileSync(join(repoRoot, "ARCHITECTURE.md"), "utf8"));
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    for (const group of ["packages", "apps"]) {
      for (const name of readdirSync(join(repoRoot, group), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)) {
        expect(rules.has(name), `${group}/${name} has no line in ARCHITECTURE.md's dependency-rules`).toBe(true);
        expect(readme.includes(`](${group}/${name})`), `README.md's table does not link ${group}/${name}`).toBe(true);
      }
    }
  });
});
