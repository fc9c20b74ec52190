// Every train config a README shows must load: a whole config in a ```yaml block through
// parseConfig, and an inline `section: { … }` through that section's schema. A block none of
// whose top-level keys is a train config's (e.g. the server's config) is some other file.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./load.js";
import { TrainConfig } from "./schema.js";

const root = fileURLToPath(new URL("../../../..", import.meta.url));

function readmes(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name.startsWith(".") || entry.name === "dist" || entry.name === "runs") return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return readmes(path);
    return entry.name === "README.md" ? [path] : [];
  });
}

const sections = TrainConfig.shape;
type Section = keyof typeof sections;
const isSection = (key: string): key is Section => Object.hasOwn(sections, key);

function isTrainConfig(block: string): boolean {
  let value: unknown;
  try {
    value = parse(block);
  } catch {
    return true; // parseConfig names the syntax error
  }
  return typeof value === "object" && value !== null && Object.keys(value).some(isSection);
}

const files = readmes(root).map((path) => ({ path: relative(root, path), text: readFileSync(path, "utf8") }));

describe("train configs in READMEs", () => {
  it("finds the READMEs", () => {
    expect(files.map((f) => f.path)).toContain("README.md");
    expect(files.map((f) => f.path)).toContain(join("apps", "trainer", "README.md"));
  });

  for (const { path, text } of files) {
    const blocks = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).filter(isTrainConfig);
    const inline = [...text.matchAll(/`([a-z_]+): (\{[^`]*\})`/g)].filter((m) => isSection(m[1]!));
    if (blocks.length + inline.length === 0) continue;
    it(`${path}: every config block and inline section loads`, () => {
      for (const block of blocks) expect(() => parseConfig(block, path)).not.toThrow();
      for (const [snippet, key, body] of inline) {
        const result = sections[key as Section].safeParse(parse(body!));
        expect(result.success, `${path}: ${snippet} — ${result.error?.message ?? ""}`).toBe(true);
      }
    });
  }
});
