// Every shell block of every README works as written. A block whose first lines carry a
// `# needs: <what>` comment needs something a test does not have (a model server, upstream data,
// a trained run, minutes of CPU): its `envace` lines are checked against their subcommand's
// --help (every flag listed there, every required option given). Any other block is run: its
// `envace` lines from source, `runs/…` paths moved to a temporary folder. Everywhere, `pnpm`
// lines (`npx -y pnpm@12.4.2 …` or bare) must name a root script, or a script of the package
// `--filter` picks, and a `vitest run` path must exist. The studies under docs/ are checked the
// same way, never run.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { CommandUnknownOpts as Command } from "@commander-js/extra-typings";
import { afterAll, describe, expect, it } from "vitest";
import { commandTree } from "./cli.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

function markdown(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name.startsWith(".") || entry.name === "dist" || entry.name === "runs") return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdown(path, keep);
    return keep(entry.name) ? [path] : [];
  });
}

interface Block {
  file: string;
  /** What the block says it needs (`# needs: …`), or undefined: the test runs it. */
  needs: string | undefined;
  /** Its command lines, continuations joined, comments dropped. */
  lines: string[];
}

/** The ```sh blocks of a markdown text. */
export function shellBlocks(file: string, text: string): Block[] {
  return [...text.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)].map((match) => {
    const raw = match[1]!.replace(/\\\n\s*/g, " ").split("\n");
    const needs = raw.map((line) => /^#\s*needs:\s*(.+)$/.exec(line.trim())?.[1]).find((what) => what !== undefined);
    const lines = raw.map((line) => line.replace(/\s#(\s.*)?$/, "").trim()).filter((line) => line !== "" && !line.startsWith("#"));
    return { file, needs, lines };
  });
}

/** Shell words of one command line: quotes grouped and removed, no expansion. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

/** The simple commands of a line: split at `&&`, `||`, `;` and `|` outside quotes. */
export function simpleCommands(line: string): string[][] {
  const commands: string[][] = [[]];
  for (const word of shellWords(line.replace(/(&&|\|\||;|\|)(?=\s|$)/g, " $1 "))) {
    if (["&&", "||", ";", "|"].includes(word)) commands.push([]);
    else commands.at(-1)!.push(word);
  }
  return commands.filter((words) => words.length > 0);
}

/** The words after `pnpm` (`npx -y pnpm@…`, or `pnpm`), leading `VAR=value` words skipped; else undefined. */
export function pnpmArgs(words: readonly string[]): string[] | undefined {
  let at = words.findIndex((word) => !/^[A-Z_][A-Z0-9_]*=/.test(word));
  if (at < 0) return undefined;
  if (words[at] === "npx") {
    at += 1;
    while (words[at]?.startsWith("-") === true) at += 1;
    return words[at] !== undefined && /^pnpm(@[\d.]+)?$/.test(words[at]!) ? words.slice(at + 1) : undefined;
  }
  return words[at] === "pnpm" ? words.slice(at + 1) : undefined;
}

/** The words after `envace`, as `pnpm envace …` or a bare `envace …`; else undefined. */
export function envaceArgs(words: readonly string[]): string[] | undefined {
  const pnpm = pnpmArgs(words);
  if (pnpm?.[0] === "envace") return pnpm.slice(1);
  return words[0] === "envace" ? words.slice(1) : undefined;
}

const tree = commandTree();
const helpOf = new Map<Command, string>();
/** One `--help` text per subcommand, as `envace <sub> --help` prints it. */
function help(command: Command): string {
  const text = helpOf.get(command) ?? command.helpInformation();
  helpOf.set(command, text);
  return text;
}

function* ancestry(command: Command): Generator<Command> {
  for (let at: Command | null = command; at !== null; at = at.parent) yield at;
}

/** The subcommand the words name, and the flags they use. */
export function resolveCommand(args: readonly string[]): { command: Command; path: string; flags: string[] } {
  let command: Command = tree;
  const path: string[] = [];
  const flags: string[] = [];
  let positional = false;
  let takesValue = false;
  for (const word of args) {
    if (takesValue && !word.startsWith("-")) {
      takesValue = false;
      continue;
    }
    takesValue = false;
    if (word.startsWith("-")) {
      const flag = word.split("=")[0]!;
      flags.push(flag);
      // Its value is the next word, unless given with `=`: an option of this command or of one above it.
      const option = [...ancestry(command)].flatMap((c) => c.options).find((o) => o.long === flag);
      takesValue = !word.includes("=") && option !== undefined && (option.required || option.optional);
      continue;
    }
    const sub = positional ? undefined : command.commands.find((c) => c.name() === word);
    if (sub === undefined) positional = true;
    else {
      command = sub;
      path.push(word);
    }
  }
  return { command, path: path.join(" "), flags };
}

/** What is wrong with an `envace` command line, judged by its subcommand's --help: unknown flags, missing required options. */
export function envaceProblems(args: readonly string[]): string[] {
  const { command, path, flags } = resolveCommand(args);
  const listed = new Set(help(command).match(/--[a-z][a-z-]*/g));
  const problems = flags.filter((flag) => !listed.has(flag)).map((flag) => `envace ${path}: ${flag} is not in its --help`);
  if (flags.includes("--help") || flags.includes("-h")) return problems;
  for (const option of command.options) {
    if (option.mandatory && option.long !== undefined && !flags.includes(option.long)) problems.push(`envace ${path}: required ${option.long} is missing`);
  }
  return problems;
}

const rootScripts = scriptsOf(join(root, "package.json"));
const workspacePackages = new Map(
  ["apps", "packages"]
    .flatMap((group) => readdirSync(join(root, group)).map((name) => join(root, group, name, "package.json")))
    .filter((file) => existsSync(file))
    .map((file) => [(JSON.parse(readFileSync(file, "utf8")) as { name: string }).name, scriptsOf(file)] as const),
);
function scriptsOf(file: string): Set<string> {
  return new Set(Object.keys((JSON.parse(readFileSync(file, "utf8")) as { scripts?: Record<string, string> }).scripts ?? {}));
}
/** pnpm's own commands a README may use (the rest must be scripts). */
const PNPM_COMMANDS = new Set(["install", "i", "add", "exec", "dlx"]);

/** What is wrong with a `pnpm` command line: a script that is not there. */
export function pnpmProblems(args: readonly string[]): string[] {
  let scripts = rootScripts;
  let where = "package.json";
  let rest = [...args];
  if (rest[0] === "--filter") {
    const name = rest[1] ?? "";
    const found = workspacePackages.get(name);
    if (found === undefined) return [`pnpm --filter ${name}: no such workspace package`];
    scripts = found;
    where = `${name}'s package.json`;
    rest = rest.slice(2);
  }
  const script = rest[0];
  if (script === undefined) return ["pnpm: no command"];
  if (PNPM_COMMANDS.has(script) || scripts.has(script)) return [];
  return [`pnpm ${script}: not a script of ${where}`];
}

/** What is wrong with a `vitest run <paths>` command: a path that does not exist. */
function vitestProblems(words: readonly string[]): string[] {
  const at = words.indexOf("vitest");
  if (at < 0 || words[at + 1] !== "run") return [];
  return words
    .slice(at + 2)
    .filter((word) => !word.startsWith("-"))
    .filter((path) => !existsSync(join(root, path)))
    .map((path) => `vitest run ${path}: no such file or folder`);
}

const readmes = markdown(root, (name) => name === "README.md");
const studies = markdown(join(root, "docs"), (name) => name.endsWith(".md") && name !== "README.md");
const blocks = [...readmes, ...studies].flatMap((path) => shellBlocks(relative(root, path), readFileSync(path, "utf8")));
const runsDir = mkdtempSync(join(tmpdir(), "readme-commands-"));
afterAll(() => rmSync(runsDir, { recursive: true, force: true }));

/** Run `envace` from source, in the repository root, with `runs/…` arguments moved under a temporary folder. */
async function runEnvace(args: readonly string[]): Promise<void> {
  const moved = args.map((word) => (word.startsWith("runs/") ? join(runsDir, word) : word));
  await promisify(execFile)(process.execPath, ["--conditions=@envace/source", "--import", "tsx", "apps/trainer/src/cli.ts", ...moved], {
    cwd: root,
    timeout: 60_000,
  });
}

describe("shell commands in READMEs", () => {
  it("finds the blocks, run and marked, and the studies' commands", () => {
    expect(readmes.map((path) => relative(root, path))).toEqual(
      expect.arrayContaining(["README.md", join("apps", "trainer", "README.md"), join("packages", "bench-tau2", "README.md")]),
    );
    expect(
      blocks.some((block) => block.needs === undefined && block.lines.some((line) => simpleCommands(line).some((words) => envaceArgs(words) !== undefined))),
    ).toBe(true);
    expect(blocks.some((block) => block.needs !== undefined)).toBe(true);
    expect(blocks.some((block) => block.file.startsWith("docs"))).toBe(true);
  });

  it("judges command lines by what --help lists and what package.json holds", () => {
    expect(envaceArgs(shellWords("npx -y pnpm@12.4.2 envace eval builtin --help"))).toEqual(["eval", "builtin", "--help"]);
    expect(envaceProblems(["eval", "builtin", "--policy", "x", "--out", "y", "--taks", "4"])).toEqual(["envace eval builtin: --taks is not in its --help"]);
    expect(envaceProblems(["eval", "builtin", "--policy", "x"])).toEqual(["envace eval builtin: required --out is missing"]);
    expect(envaceProblems(["--log-format", "json", "serve", "--policy", "x", "--port=8080"])).toEqual([]);
    expect(pnpmProblems(["tset"])).toEqual(["pnpm tset: not a script of package.json"]);
    expect(pnpmProblems(["--filter", "@envace/nothing", "bench"])).toEqual(["pnpm --filter @envace/nothing: no such workspace package"]);
    expect(pnpmArgs(shellWords("ENVACE_X=1 npx -y pnpm@12.4.2 --filter @envace/grpo bench"))).toEqual(["--filter", "@envace/grpo", "bench"]);
    expect(simpleCommands("umask 077 && openssl rand -hex 32 > ~/x")).toEqual([
      ["umask", "077"],
      ["openssl", "rand", "-hex", "32", ">", "~/x"],
    ]);
  });

  for (const [index, block] of blocks.entries()) {
    const study = block.file.startsWith("docs");
    const label = `${block.file}, block ${blocks.slice(0, index).filter((b) => b.file === block.file).length + 1}${block.needs === undefined ? "" : ` (needs: ${block.needs})`}`;
    const runs = !study && block.needs === undefined && block.lines.some((line) => simpleCommands(line).some((words) => envaceArgs(words) !== undefined));
    it(`${label}: ${runs ? "runs" : "every command is checked"}`, { timeout: 120_000 }, async () => {
      const problems: string[] = [];
      for (const words of block.lines.flatMap(simpleCommands)) {
        const envace = envaceArgs(words);
        const pnpm = pnpmArgs(words);
        if (envace !== undefined) problems.push(...envaceProblems(envace));
        else if (pnpm !== undefined) problems.push(...pnpmProblems(pnpm));
        problems.push(...vitestProblems(words));
        // Not an envace, pnpm or vitest line: only a marked block (or a study) may hold it.
        if (envace === undefined && pnpm === undefined && !words.includes("vitest") && !study && block.needs === undefined) {
          problems.push(`${words.join(" ")}: neither run nor checked here; mark the block "# needs: …"`);
        }
      }
      expect(problems).toEqual([]);
      if (!runs) return;
      for (const words of block.lines.flatMap(simpleCommands)) {
        const envace = envaceArgs(words);
        if (envace !== undefined) await runEnvace(envace);
      }
    });
  }
});
