import { InvariantError } from "@envace/errors";
import type { Environment, JsonValue, Task, ToolCall, ToolResult, ToolSpec } from "@envace/protocol";
import { fromJson, type PyDict, type PyValue } from "@envace/python-text";
import type { VitaDb, VitaDomain } from "./db.js";
import { DELIVERY_TOOLS } from "./delivery.js";
import { INSTORE_TOOLS } from "./instore.js";
import { newDb, type VitaTask } from "./task.js";
import { GENERIC_TOOLS, respond, type VitaResponse, type VitaTool } from "./toolkit.js";

/** Every tool of a domain by name: the domain's own, then the generic ones. */
export const DOMAIN_TOOLS: Readonly<Record<VitaDomain, ReadonlyMap<string, VitaTool>>> = {
  delivery: new Map([...DELIVERY_TOOLS, ...GENERIC_TOOLS].map((tool) => [tool.name, tool])),
  instore: new Map([...INSTORE_TOOLS, ...GENERIC_TOOLS].map((tool) => [tool.name, tool])),
};

/** A tool as the agent sees it: an OpenAI function tool with its parameters' JSON Schema. */
export function toolSpec(tool: VitaTool): ToolSpec {
  const required = tool.params.filter((p) => !("default" in p)).map((p) => p.name);
  return {
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: { type: "object", properties: Object.fromEntries(tool.params.map((p) => [p.name, p.schema])), required },
    },
  };
}

/**
 * One episode of a VitaBench task: a fresh database, and every tool call answered as upstream's
 * `Environment.get_response` answers it. Upstream's plain-text answers to failed checks stay
 * `ok` results (the agent reads the same text upstream's does); its `Error: …` answers are typed
 * errors whose `message` is that text.
 */
export class VitaEnvironment implements Environment {
  private current: VitaDb | undefined;

  constructor(
    /** Looks a protocol task up by its id. */
    private readonly tasks: ReadonlyMap<string, VitaTask>,
  ) {}

  reset(task: Task): Promise<void> {
    const vita = this.tasks.get(task.id);
    if (vita === undefined) return Promise.reject(new InvariantError(`no VitaBench task "${task.id}" in this environment`));
    this.current = newDb(vita);
    return Promise.resolve();
  }

  get db(): VitaDb {
    if (this.current === undefined) throw new InvariantError("reset() first");
    return this.current;
  }

  tools(): readonly ToolSpec[] {
    return [...DOMAIN_TOOLS[this.db.domain].values()].map(toolSpec);
  }

  /** Upstream's answer to a call whose arguments are Python values (ints and floats apart). */
  respond(name: string, args: PyDict): VitaResponse {
    return respond(DOMAIN_TOOLS[this.db.domain], this.db, name, args);
  }

  call(call: ToolCall): Promise<ToolResult> {
    const args = fromJson(call.arguments) as PyDict;
    const { content, error } = this.respond(call.name, args);
    if (error) return Promise.resolve({ status: "error", callId: call.id, name: call.name, error: { code: errorCode(content), message: content } });
    return Promise.resolve({ status: "ok", callId: call.id, name: call.name, content });
  }

  state(): Promise<JsonValue> {
    return Promise.resolve({ db_hash: this.db.hash() });
  }
}

function errorCode(content: string): string {
  if (/^Error: Tool '.*' not found\.$/.test(content)) return "TOOL_NOT_AVAILABLE";
  if (/^Error: \S+\(\) (missing|got an unexpected)/.test(content)) return "INVALID_PARAMETERS";
  return "TOOL_ERROR";
}

/** The answers and DB hashes of one task's calls replayed on a fresh environment. */
export interface ReplayResult {
  readonly initialHash: string;
  readonly calls: readonly VitaResponse[];
  readonly finalHash: string;
}

/** Replay recorded calls (`name`, Python-valued `arguments`) in order on a fresh database. */
export function replayCalls(task: VitaTask, calls: readonly { readonly name: string; readonly arguments: PyValue }[]): ReplayResult {
  const db = newDb(task);
  const tools = DOMAIN_TOOLS[task.domain];
  const initialHash = db.hash();
  const answers = calls.map((call) => respond(tools, db, call.name, call.arguments instanceof Map ? call.arguments : new Map<string, PyValue>()));
  return { initialHash, calls: answers, finalHash: db.hash() };
}
