// Every package whose README opens with a runnable example keeps it in `src/example.ts`: the
// README shows that file verbatim, first, and shows what it really prints.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const packagesDir = fileURLToPath(new URL("../../../packages", import.meta.url));
const withExamples = readdirSync(packagesDir).filter((name) => existsSync(join(packagesDir, name, "src", "example.ts")));

describe("README examples", () => {
  it("finds the packages that have one", () => {
    expect(withExamples).toEqual(expect.arrayContaining(["bench-builtin", "protocol", "rehearsal"]));
  });

  for (const name of withExamples) {
    const packageDir = join(packagesDir, name);
    const readme = readFileSync(join(packageDir, "README.md"), "utf8");
    const example = readFileSync(join(packageDir, "src", "example.ts"), "utf8");

    it(`${name}: the README starts with the runnable example, verbatim`, () => {
      expect(/```ts\n([\s\S]*?)```/.exec(readme)?.[1]).toBe(example);
      expect(readme.indexOf("```ts")).toBeLessThan(readme.indexOf("## "));
    });

    it(`${name}: the README shows what the example really prints`, async () => {
      const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=@envace/source", "--import", "tsx", "src/example.ts"], { cwd: packageDir });
      expect(stdout).toBe(/```text\n([\s\S]*?)```/.exec(readme)?.[1]);
    });
  }
});
