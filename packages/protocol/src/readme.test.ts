import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const readme = readFileSync(join(packageDir, "README.md"), "utf8");
const example = readFileSync(join(packageDir, "src/example.ts"), "utf8");

describe("the README", () => {
  it("starts with the runnable example, verbatim", () => {
    const firstBlock = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(firstBlock).toBe(example);
    expect(readme.indexOf("```ts")).toBeLessThan(readme.indexOf("## "));
  });

  it("shows what the example really prints", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=@envace/source", "--import", "tsx", "src/example.ts"], {
      cwd: packageDir,
    });
    const shown = /```text\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(stdout).toBe(shown);
  });
});
