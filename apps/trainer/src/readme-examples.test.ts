// Every package whose README opens with a runnable example keeps it in `src/example.ts`: the
// README shows that file verbatim, first, and shows what it really prints.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const withExamples = ["packages", "apps"]
  .flatMap((group) => readdirSync(join(root, group)).map((name) => join(group, name)))
  .filter((name) => existsSync(join(root, name, "src", "example.ts")));

describe("README examples", () => {
  it("finds the packages that have one", () => {
    expect(withExamples).toEqual(
      expect.arrayContaining(["packages/bench-builtin", "packages/protocol", "packages/rehearsal", "apps/server"].map((name) => join(...name.split("/")))),
    );
  });

  for (const name of withExamples) {
    const packageDir = join(root, name);
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
