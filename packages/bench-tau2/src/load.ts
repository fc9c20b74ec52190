import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { InputError, parseRecord, RecordError } from "@envace/protocol";
import type { PyValue } from "@envace/python-text";
import { readPyJsonFile, readText } from "@envace/records";
import { parse as parseToml, TomlDate, TomlError } from "smol-toml";
import { freezeDatabase, type DbRoot } from "./database.js";
import { DOMAINS, type DomainDefinition, type DomainSide, type PolicySource } from "./domains/index.js";
import { Tau2Task } from "./task.js";

/** A domain with its data: policy, tasks and the databases every episode starts from. */
export interface Tau2Domain {
  readonly definition: DomainDefinition;
  /** The folder the files came from. */
  readonly dir: string;
  /** The domain policy (`policy.md`), the agent's system prompt. */
  readonly policy: string;
  /**
   * Upstream's solo mode: no user simulator; the agent works the task's ticket alone with the
   * tools of both sides, under the domain's solo policy.
   */
  readonly solo: boolean;
  /** The policy variant asked for (telecom: `manual` or `workflow`); unset for the default. */
  readonly variant?: string;
  readonly tasks: readonly Tau2Task[];
  /** The agent-side database, frozen; environments copy what they change. */
  readonly db: DbRoot;
  /** The user-side database of a dual-control domain, frozen. */
  readonly userDb?: DbRoot;
}

/** The user simulator's guidelines (`user_simulator/*.md`), read at run time. */
export interface UserGuidelines {
  /** For users without tools (`simulation_guidelines.md`). */
  readonly plain: string;
  /** For users with tools of their own (`simulation_guidelines_tools.md`). */
  readonly tools: string;
}

/** Load a `tasks.json`: a list of upstream tasks, each validated; errors name the task's index and field. */
export async function loadTasks(file: string): Promise<Tau2Task[]> {
  const value = await readPyJsonFile(file);
  if (!Array.isArray(value)) throw new RecordError({ file }, [{ path: "", message: "expected a list of tasks" }]);
  const tasks = value.map((item, index) => parseRecord(Tau2Task, item, { file, record: index }));
  const seen = new Set<string>();
  tasks.forEach((task, index) => {
    if (seen.has(task.id)) throw new RecordError({ file, record: index }, [{ path: "id", message: `duplicate task id "${task.id}"` }]);
    seen.add(task.id);
  });
  return tasks;
}

/** Load and validate one side's database file (JSON, or TOML by its extension); the result is frozen. */
export async function loadDatabase(file: string, side: DomainSide): Promise<DbRoot> {
  const value = file.endsWith(".toml") ? parsePyTomlText(await readText(file), file) : await readPyJsonFile(file);
  return freezeDatabase(parseRecord(side.schema, value, { file }));
}

/**
 * Read TOML as upstream's loader hands it to pydantic: integers as ints (`bigint`), floats as
 * floats, tables as dicts (`Map`s, in file order), dates and times as their ISO text. A syntax
 * error names the file and its line.
 */
export function parsePyTomlText(text: string, file: string): PyValue {
  try {
    return tomlToPy(parseToml(text, { integersAsBigInt: true }));
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const reason = error.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
    throw new RecordError({ file, line: error.line }, [{ path: "", message: `not TOML (${reason}, column ${error.column})` }]);
  }
}

function tomlToPy(value: unknown): PyValue {
  if (value instanceof TomlDate) return value.toISOString();
  if (Array.isArray(value)) return value.map(tomlToPy);
  if (typeof value === "object" && value !== null) {
    return new Map(Object.entries(value).map(([key, item]) => [key, tomlToPy(item)]));
  }
  return value as PyValue;
}

export interface LoadDomainOptions {
  /** The τ² data folder (holding `<domain>/` and `user_simulator/`) or the domain's own folder. */
  readonly data: string;
  /** Override the tasks file, e.g. a split or a user's own tasks. */
  readonly tasks?: string;
  /** Override the agent-side database file. */
  readonly db?: string;
  /** Telecom's tech-support policy: `manual` (default, upstream's `telecom`) or `workflow` (`telecom-workflow`). */
  readonly policyVariant?: string;
  /** Upstream's solo mode (mock and telecom): the solo policy, and the user's tools given to the agent. */
  readonly solo?: boolean;
}

/**
 * Load a domain from upstream files: `<data>/<domain>/{policy.md,tasks.json,db.json}`
 * (`user_db.json` too for the mock domain). `data` may also be the domain folder itself.
 */
export async function loadDomain(name: string, options: LoadDomainOptions): Promise<Tau2Domain> {
  const definition = DOMAINS[name];
  if (definition === undefined) {
    throw new InputError(`unknown τ² domain "${name}" (known: ${Object.keys(DOMAINS).join(", ")})`);
  }
  const dir = resolveDomainDir(definition, options.data);
  const dbFile = options.db ?? join(dir, definition.agent.file);
  if (!existsSync(dbFile)) {
    throw new InputError(
      `${dbFile}: no such file. The ${name} database is not in this folder; copy it from upstream tau2-bench (data/tau2/domains/${name}/${definition.agent.file}) or pass its path.`,
    );
  }
  const tasksFile = options.tasks ?? join(dir, "tasks.json");
  if (options.tasks === undefined && !existsSync(tasksFile)) {
    // Upstream's telecom folder ships splits (tasks_small.json) and no tasks.json.
    const splits = readdirSync(dir).filter((file) => /^tasks.*\.json$/.test(file));
    throw new InputError(
      `${tasksFile}: no such file; pass the ${name} tasks with --tasks-file${splits.length > 0 ? ` (this folder has ${splits.join(", ")})` : ""}`,
    );
  }
  const solo = options.solo ?? false;
  const [policy, tasks, db, userDb] = await Promise.all([
    readPolicy(definition, dir, options.policyVariant, solo),
    loadTasks(tasksFile),
    loadDatabase(dbFile, definition.agent),
    definition.user === undefined ? undefined : loadDatabase(join(dir, definition.user.file), definition.user),
  ]);
  const variant = options.policyVariant === undefined ? {} : { variant: options.policyVariant };
  return { definition, dir, policy, solo, ...variant, tasks, db, ...(userDb === undefined ? {} : { userDb }) };
}

// A domain folder holds its tasks.json or, as telecom's does, only a split and the database.
function resolveDomainDir(definition: DomainDefinition, data: string): string {
  const root = resolve(data);
  const nested = join(root, definition.name);
  const markers = ["tasks.json", definition.agent.file];
  if (markers.some((file) => existsSync(join(nested, file)))) return nested;
  if (markers.some((file) => existsSync(join(root, file)))) return root;
  throw new InputError(`no τ² ${definition.name} data in ${root}: expected ${join(nested, "tasks.json")} or ${join(root, "tasks.json")}`);
}

/** The domain policy as upstream's `get_environment(solo_mode, policy_type)` composes it. */
async function readPolicy(definition: DomainDefinition, dir: string, variant: string | undefined, solo: boolean): Promise<string> {
  const source: PolicySource = definition.policy ?? { kind: "file", file: "policy.md" };
  const variants = source.kind === "file" ? [] : Object.keys(source.tech);
  if (variant !== undefined && !variants.includes(variant)) {
    throw new InputError(`policy variant "${variant}": ${variants.length === 0 ? "this domain has one policy" : `known: ${variants.join(", ")}`}`);
  }
  if (solo && source.solo === undefined) {
    // As upstream's retail and airline: no user side to hand the agent, so no solo mode.
    const withSolo = Object.values(DOMAINS).filter((domain) => domain.policy?.solo !== undefined);
    throw new InputError(`the ${definition.name} domain has no solo mode (${withSolo.map((domain) => domain.name).join(" and ")} have one)`);
  }
  if (source.kind === "file") return readText(join(dir, solo ? source.solo! : source.file));
  const files = solo ? source.solo! : source;
  const techFile = files.tech[variant ?? "manual"]!;
  const [main, tech] = await Promise.all([readText(join(dir, files.main)), readText(join(dir, techFile))]);
  return `<main_policy>\n${main}\n</main_policy>\n<tech_support_policy>\n${tech}\n</tech_support_policy>`;
}

/**
 * Read the user simulator's guidelines from `<data>/user_simulator/` (or the folder next to a
 * domain folder), as upstream reads them at run time.
 */
export async function loadUserGuidelines(data: string): Promise<UserGuidelines> {
  const root = resolve(data);
  const dir = [join(root, "user_simulator"), join(dirname(root), "user_simulator")].find((candidate) =>
    existsSync(join(candidate, "simulation_guidelines.md")),
  );
  if (dir === undefined) throw new InputError(`no user simulator guidelines in ${join(root, "user_simulator")}`);
  const [plain, tools] = await Promise.all([readText(join(dir, "simulation_guidelines.md")), readText(join(dir, "simulation_guidelines_tools.md"))]);
  return { plain, tools };
}
