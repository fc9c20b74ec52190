import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { InputError, parseRecord, RecordError } from "@envace/protocol";
import type { PyValue } from "@envace/python-text";
import { parsePyJsonText, readText } from "@envace/records";
import { z } from "zod";
import { buildDb, VITA_DOMAINS, type VitaDb, type VitaDomain } from "./db.js";
import { FieldError } from "./fields.js";

/** One expected end state: the orders that must (or may) exist, and rubrics about it. */
export const VitaExpectedState = z.object({
  required_orders: z.array(z.unknown()).nullish(),
  optional_orders: z.array(z.unknown()).nullish(),
  state_rubrics: z.array(z.string()).nullish(),
});
export type VitaExpectedState = z.infer<typeof VitaExpectedState>;

/** What the evaluator checks: expected states with their rubrics, and overall rubrics. */
export const VitaEvaluationCriteria = z.object({
  expected_states: z.array(VitaExpectedState).nullish(),
  overall_rubrics: z.array(z.string()).nullish(),
});
export type VitaEvaluationCriteria = z.infer<typeof VitaEvaluationCriteria>;

/** The fields of an upstream task other than its database, as upstream's `Task` model validates them. */
export const VitaTaskFields = z.object({
  id: z.string().min(1),
  domain: z.string(),
  environment: z.record(z.string(), z.unknown()),
  user_scenario: z.object({ user_profile: z.record(z.string(), z.union([z.record(z.string(), z.unknown()), z.string(), z.array(z.unknown())])) }),
  instructions: z.string(),
  evaluation_criteria: VitaEvaluationCriteria.nullish(),
  message_history: z.array(z.unknown()).nullish(),
});

/** A VitaBench task: its fields, and its `environment` exactly as Python read it (ints and floats apart). */
export interface VitaTask {
  readonly id: string;
  /** Position in the tasks file. */
  readonly index: number;
  readonly domain: VitaDomain;
  readonly userProfile: Readonly<Record<string, unknown>>;
  readonly instructions: string;
  readonly criteria: VitaEvaluationCriteria | null;
  /** The task's database source; `newDb` builds a fresh database from it. */
  readonly environment: PyValue;
  /** The task's current time (`environment.time`), which the agent is told. */
  readonly time: string;
}

/** A fresh database for one episode of the task (registries empty, the id clock at 0). */
export function newDb(task: VitaTask): VitaDb {
  return buildDb(task.domain, task.environment);
}

function describe(file: string, id: string | undefined, index: number): { file: string; record: string | number } {
  return { file, record: id === undefined ? index : `task ${id}` };
}

/**
 * Read a VitaBench tasks file (`tasks_en.json`, a list of tasks) for one domain. Every task is
 * validated, its database built once as upstream would; a bad one is named by file, task id and field.
 */
export async function loadVitaTasks(file: string, domain: VitaDomain): Promise<VitaTask[]> {
  const text = await readText(file);
  return parseVitaTasks(text, file, domain);
}

/** Parse the text of a tasks file (`file` names it in errors); see `loadVitaTasks`. */
export function parseVitaTasks(text: string, file: string, domain: VitaDomain): VitaTask[] {
  const exact = parsePyJsonText(text, file);
  const plain: unknown = JSON.parse(text);
  if (!Array.isArray(exact) || !Array.isArray(plain)) throw new RecordError({ file }, [{ path: "", message: "expected a list of tasks" }]);
  const seen = new Set<string>();
  return plain.map((value, index) => {
    const rawId = (value as { id?: unknown } | null)?.id;
    const source = describe(file, typeof rawId === "string" ? rawId : undefined, index);
    const fields = parseRecord(VitaTaskFields, value, source);
    if (seen.has(fields.id)) throw new RecordError(source, [{ path: "id", message: "duplicate task id" }]);
    seen.add(fields.id);
    const environment = (exact[index] as Map<string, PyValue>).get("environment")!;
    let db: VitaDb;
    try {
      db = buildDb(domain, environment);
    } catch (error) {
      if (error instanceof FieldError) throw new RecordError(source, [{ path: error.path, message: error.reason }]);
      throw error;
    }
    if (db.time === null || db.time === "") throw new RecordError(source, [{ path: "environment.time", message: "required (the task's current time)" }]);
    return {
      id: fields.id,
      index,
      domain,
      userProfile: fields.user_scenario.user_profile,
      instructions: fields.instructions,
      criteria: fields.evaluation_criteria ?? null,
      environment,
      time: db.time,
    };
  });
}

/** Where a domain's tasks are: `<data>/<domain>/tasks_en.json`, or `<data>/tasks_en.json` when `data` is the domain folder. */
export function resolveTasksFile(data: string, domain: string): string {
  if (!(VITA_DOMAINS as readonly string[]).includes(domain)) {
    throw new InputError(`unknown VitaBench domain "${domain}" (ported: ${VITA_DOMAINS.join(", ")}; OTA and cross-domain are not yet)`);
  }
  const root = resolve(data);
  for (const candidate of [join(root, domain, "tasks_en.json"), join(root, "tasks_en.json")]) if (existsSync(candidate)) return candidate;
  throw new InputError(`no VitaBench ${domain} tasks in ${root}: expected ${join(root, domain, "tasks_en.json")}`);
}
