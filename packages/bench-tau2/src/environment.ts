import { EnvaceError, InvariantError } from "@envace/errors";
import { InputError, type Environment, type JsonValue, type Task, type ToolCall, type ToolResult, type ToolSpec } from "@envace/protocol";
import {
  attributeError,
  errorCode,
  fromJson,
  isPyModel,
  jsonLoads,
  type PyDict,
  pyDumps,
  pyEquals,
  PyException,
  pyStr,
  pyTypeName,
  type PyValue,
  toJson,
  valueError,
} from "@envace/python-text";
import { Database, type DbRoot } from "./database.js";
import type { DomainSide } from "./domains/index.js";
import type { Tau2Domain } from "./load.js";
import type { EnvAssertion, EnvFunctionCall, InitialState, Requestor, Tau2Message, Tau2Task, Tau2ToolCall } from "./task.js";

/** A message history whose tool messages do not answer its tool calls in order, or that ends on the wrong role. */
export class MessageHistoryError extends EnvaceError {
  override readonly code = "message-history";
}

/** Replaying a recorded call gave a different answer from the one the history recorded. */
export class ReplayMismatchError extends EnvaceError {
  override readonly code = "replay-mismatch";
}

/** The answer to one tool call exactly as upstream records it (`ToolMessage`). */
export interface Tau2ToolResponse {
  readonly id: string;
  /** The text the agent (or user) reads: a tool's output or `Error: <message>`. */
  readonly content: string;
  readonly requestor: Requestor;
  readonly error: boolean;
  /** The Python exception class behind an error (`ValueError`, `TypeError`, …). */
  readonly errorType?: string;
}

export interface SetStateOptions {
  /**
   * When a replayed write returns something other than what the history recorded: throw
   * (true, upstream's default for live runs) or note it in `replayMismatches` and go on.
   */
  readonly strict?: boolean;
}

export interface EnvironmentOptions {
  /**
   * Upstream's solo mode (default: the domain's): the agent's calls to the user's tools run on
   * the user's side, and the user may call nothing.
   */
  readonly solo?: boolean;
}

/** A replayed call whose response differed from the recorded one (lenient replays only). */
export interface ReplayMismatch {
  readonly call: Tau2ToolCall;
  readonly expected: string | null;
  readonly actual: string;
}

/**
 * A τ² domain as a protocol `Environment`: the agent's tools over a fresh copy of the
 * domain database, every response byte for byte as upstream's, and `dbHash()` equal to
 * upstream's `get_db_hash()`. Domains with user-side tools (mock; telecom later) expose
 * them as `user`.
 */
export class Tau2Environment implements Environment {
  private agentDb: Database<DbRoot>;
  private userDb: Database<DbRoot> | undefined;
  private readonly taskIndex: ReadonlyMap<string, Tau2Task>;
  /** Calls whose replayed response differed from the history (lenient `setState` only). */
  readonly replayMismatches: ReplayMismatch[] = [];
  readonly user?: Environment;
  readonly solo: boolean;

  constructor(
    readonly domain: Tau2Domain,
    options: EnvironmentOptions = {},
  ) {
    this.solo = options.solo ?? domain.solo;
    if (this.solo) checkSoloTools(domain.definition);
    this.agentDb = Database.open(domain.definition.agent.className, domain.definition.agent.schema, domain.db);
    this.userDb = this.openUserDb();
    this.taskIndex = new Map(domain.tasks.map((task) => [task.id, task]));
    if (domain.definition.user !== undefined) this.user = new UserSide(this, domain.definition.user);
  }

  /** A fresh environment with `task`'s initial state applied. */
  static forTask(domain: Tau2Domain, task: Tau2Task | null, options: SetStateOptions & EnvironmentOptions = {}): Tau2Environment {
    const environment = new Tau2Environment(domain, options);
    environment.resetTo(task, options);
    return environment;
  }

  private openUserDb(): Database<DbRoot> | undefined {
    const side = this.domain.definition.user;
    if (side === undefined || this.domain.userDb === undefined) return undefined;
    return Database.open(side.className, side.schema, this.domain.userDb);
  }

  /** The domain policy: the agent's system prompt. */
  get policy(): string {
    return this.domain.policy;
  }

  // --- the role protocol -------------------------------------------------------------

  /** Start `task` afresh. The task is looked up by id among the domain's tasks. */
  reset(task: Task): Promise<void> {
    const tau2Task = this.taskIndex.get(task.id);
    if (tau2Task === undefined) return Promise.reject(new InvariantError(`task "${task.id}" is not a ${this.domain.definition.name} task`));
    this.resetTo(tau2Task);
    return Promise.resolve();
  }

  /** The agent's tools; in solo mode the user's follow them, as upstream's `build_agent` hands them over. */
  tools(): readonly ToolSpec[] {
    const agent = this.domain.definition.agent.toolkit.specs();
    return this.solo ? [...agent, ...userToolSpecs(this.domain.definition)] : agent;
  }

  /**
   * Run one agent tool call. An `ok` result's `content` is the exact text upstream shows the
   * agent; an `error` result's `message` is the exact `Error: …` text, and its `code` names the
   * Python exception (`VALUE_ERROR`, `TYPE_ERROR`, …).
   */
  call(call: ToolCall): Promise<ToolResult> {
    return Promise.resolve(toToolResult(call, this.respond(protocolCall(call, "assistant"))));
  }

  state(): Promise<JsonValue> {
    return Promise.resolve(toJson(this.agentDb.dump()));
  }

  // --- τ² --------------------------------------------------------------------------------

  /** Fresh databases, then the task's initial state (data, actions, message history). */
  resetTo(task: Tau2Task | null, options: SetStateOptions = {}): void {
    this.agentDb = Database.open(this.domain.definition.agent.className, this.domain.definition.agent.schema, this.domain.db);
    this.userDb = this.openUserDb();
    this.replayMismatches.length = 0;
    // Upstream's constructor syncs too (a no-op until the user has a phone number).
    this.syncTools();
    const initial = task?.initial_state ?? null;
    this.setState(initial, initial?.message_history ?? [], options);
  }

  /**
   * Upstream's `set_state`: apply initialisation data and actions, then replay the writes of
   * a message history (reads are skipped, unknown tools ignored).
   */
  setState(initial: InitialState | null, history: readonly Tau2Message[], options: SetStateOptions = {}): void {
    if (this.solo && history.some((message) => message.role === "user"))
      throw new SoloModeError("a conversation with user messages cannot be replayed in solo mode");
    const data = initial?.initialization_data ?? null;
    if (data?.agent_data != null) {
      this.agentDb.update(data.agent_data);
      // Upstream then points the user toolkit at the agent's database.
      if (this.userDb !== undefined) this.userDb = this.agentDb;
    }
    if (data?.user_data != null) {
      if (this.userDb === undefined) throw attributeError("'NoneType' object has no attribute 'update_db'");
      this.userDb.update(data.user_data);
      this.agentDb = this.userDb;
    }
    for (const action of initial?.initialization_actions ?? []) this.runEnvFunctionCall(action);
    for (const [call, recorded] of pairToolCalls(history)) {
      if (!this.hasTool(call.name) || !this.mutates(call.name)) continue;
      const response = this.respond(call);
      if (sameContent(response.content, recorded.content)) continue;
      if (options.strict ?? true) {
        throw new ReplayMismatchError(
          `replaying ${call.name} (call ${call.id}) returned ${response.content} but the history recorded ${String(recorded.content)}`,
        );
      }
      this.replayMismatches.push({ call, expected: recorded.content, actual: response.content });
    }
    this.syncTools();
  }

  /**
   * Upstream's `sync_tools()`: the domain brings the user's side up to date with the agent's
   * (telecom); nothing for the other domains.
   */
  syncTools(): void {
    const sync = this.domain.definition.sync;
    if (sync !== undefined && this.userDb !== undefined) sync(this.agentDb, this.userDb);
  }

  private side(requestor: Requestor): { toolkit: DomainSide["toolkit"]; db: Database<DbRoot> } | undefined {
    if (requestor === "assistant") return { toolkit: this.domain.definition.agent.toolkit, db: this.agentDb };
    const side = this.domain.definition.user;
    if (side === undefined || this.userDb === undefined) return undefined;
    return { toolkit: side.toolkit, db: this.userDb };
  }

  /** Whether either side has a tool of this name. */
  hasTool(name: string): boolean {
    return this.domain.definition.agent.toolkit.has(name) || (this.domain.definition.user?.toolkit.has(name) ?? false);
  }

  /** Whether a call of `name` changes state (and is replayed by the evaluator). */
  mutates(name: string): boolean {
    const agent = this.domain.definition.agent.toolkit;
    if (agent.has(name)) return agent.mutates(name);
    return this.domain.definition.user?.toolkit.mutates(name) ?? true;
  }

  /**
   * `make_tool_call`: run a tool for the agent or the user, with no `sync_tools()` after it
   * (upstream's evaluator builds its gold state this way); failures throw `PyException`.
   */
  makeToolCall(name: string, requestor: Requestor, kwargs: PyDict): PyValue {
    if (this.solo && requestor === "user") throw valueError("User tool calls are not allowed in solo mode");
    // Solo: the agent's call to one of the user's tools runs on the user's side.
    const soloUser = this.solo && (this.domain.definition.user?.toolkit.has(name) ?? false);
    const side = this.side(soloUser ? "user" : requestor);
    if (side === undefined) throw valueError("User tools not available");
    return side.toolkit.use(side.db, name, kwargs);
  }

  /**
   * Upstream's `get_response`: the tool's output as text, or `Error: <message>`. A call that
   * returns is followed by `sync_tools()` (whose failure is the call's error, as upstream).
   */
  respond(call: Tau2ToolCall): Tau2ToolResponse {
    try {
      const output = this.makeToolCall(call.name, call.requestor, call.arguments);
      this.syncTools();
      return { id: call.id, content: toJsonString(output), requestor: call.requestor, error: false };
    } catch (error) {
      if (!(error instanceof PyException)) throw error;
      return { id: call.id, content: `Error: ${error.text}`, requestor: call.requestor, error: true, errorType: error.pyType };
    }
  }

  /** Run any toolkit function (initialisation action or assertion helper) on one side. */
  runEnvFunctionCall(call: EnvFunctionCall): PyValue {
    const side = this.side(call.env_type);
    if (side === undefined) throw attributeError(`'NoneType' object has no attribute '${call.func_name}'`);
    const result = side.toolkit.callFunction(side.db, call.func_name, call.arguments);
    this.syncTools();
    return result;
  }

  /** Whether an environment assertion holds on the current state. */
  runEnvAssertion(assertion: EnvAssertion): boolean {
    const result = this.runEnvFunctionCall(assertion);
    if (typeof result !== "boolean") {
      throw valueError(`Function ${assertion.func_name} returned <class '${pyTypeName(result)}'> instead of bool`);
    }
    return result === assertion.assert_value;
  }

  /** Upstream's `get_db_hash()` of the agent-side database. */
  dbHash(): string {
    return this.agentDb.hash();
  }

  /** Upstream's `get_user_db_hash()`: null for domains without a user side. */
  userDbHash(): string | null {
    return this.userDb?.hash() ?? null;
  }

  /** The user-side tools as OpenAI function tools (empty when the domain has none). */
  userTools(include?: readonly string[] | null): ToolSpec[] {
    return userToolSpecs(this.domain.definition, include);
  }

  /** The user-side database dump, for snapshots. */
  userState(): JsonValue {
    return this.userDb === undefined ? null : toJson(this.userDb.dump());
  }
}

/** What solo mode cannot take: a history with user messages (a dual-control run), tools named alike on both sides. */
export class SoloModeError extends InputError {
  override readonly code: string = "solo-mode";
  override readonly name = "SoloModeError";
}

// Upstream's `validate_solo_mode`: one list of tools for the agent, so no name on both sides.
function checkSoloTools(definition: Tau2Domain["definition"]): void {
  const user = definition.user?.toolkit;
  const overlap = definition.agent.toolkit.tools.map((tool) => tool.name).filter((name) => user?.has(name) ?? false);
  if (overlap.length > 0) throw new SoloModeError(`tool names on both sides: ${overlap.join(", ")}`);
}

/** The tools a task's user may call (`task.user_tools` picks some; default all): none for domains without a user side. */
export function userToolSpecs(definition: Tau2Domain["definition"], include?: readonly string[] | null): ToolSpec[] {
  const toolkit = definition.user?.toolkit;
  if (toolkit === undefined) return [];
  const specs = toolkit.specs();
  if (include === undefined || include === null) return specs;
  const unknown = include.filter((name) => !toolkit.has(name));
  // Upstream offers the user no tools when the task names one the domain lacks.
  if (unknown.length > 0) return [];
  return specs.filter((spec) => include.includes(spec.function.name));
}

/** The user's own device in a dual-control domain, as a protocol `Environment`. */
class UserSide implements Environment {
  constructor(
    private readonly parent: Tau2Environment,
    private readonly side: DomainSide,
  ) {}

  reset(): Promise<void> {
    return Promise.resolve();
  }

  tools(): readonly ToolSpec[] {
    return this.side.toolkit.specs();
  }

  call(call: ToolCall): Promise<ToolResult> {
    return Promise.resolve(toToolResult(call, this.parent.respond(protocolCall(call, "user"))));
  }

  state(): Promise<JsonValue> {
    return Promise.resolve(this.parent.userState());
  }
}

function protocolCall(call: ToolCall, requestor: Requestor): Tau2ToolCall {
  return { id: call.id, name: call.name, arguments: fromJson(call.arguments) as PyDict, requestor };
}

function toToolResult(call: ToolCall, response: Tau2ToolResponse): ToolResult {
  if (!response.error) return { status: "ok", callId: call.id, name: call.name, content: response.content };
  return {
    status: "error",
    callId: call.id,
    name: call.name,
    error: { code: errorCode(response.errorType ?? "Exception"), message: response.content },
  };
}

/**
 * Upstream's `Environment.to_json_str`: text stays as it is; anything else goes through
 * `json.dumps`, with scalars outside models turned into strings first (`True` → `"True"`).
 */
export function toJsonString(output: PyValue): string {
  if (typeof output === "string") return output;
  return pyDumps(stringifyScalars(output));
}

function stringifyScalars(value: PyValue): PyValue {
  if (value === null || typeof value === "string" || isPyModel(value)) return value;
  if (typeof value === "boolean" || typeof value === "bigint" || typeof value === "number") return pyStr(value);
  if (Array.isArray(value)) return value.map(stringifyScalars);
  const dict = new Map<string, PyValue>();
  for (const [key, item] of value) dict.set(key, stringifyScalars(item));
  return dict;
}

/** Whether two tool outputs are equal after `json.loads` (or as text when not JSON). */
function sameContent(actual: string, recorded: string | null): boolean {
  if (recorded === null) return false;
  return pyEquals(loadsOrText(actual), loadsOrText(recorded));
}

function loadsOrText(text: string): PyValue {
  try {
    return jsonLoads(text);
  } catch {
    return text;
  }
}

/**
 * Upstream's `get_actions_from_messages`: every tool call in order with the tool message
 * that answers it, checking that each call is answered at once and by id.
 */
export function pairToolCalls(history: readonly Tau2Message[]): [Tau2ToolCall, Extract<Tau2Message, { role: "tool" }>][] {
  const pairs: [Tau2ToolCall, Extract<Tau2Message, { role: "tool" }>][] = [];
  let i = 0;
  while (i < history.length) {
    const message = history[i++]!;
    if (message.role === "tool") throw new MessageHistoryError("message history: a tool message must follow a tool call");
    if ((message.role === "assistant" || message.role === "user") && message.tool_calls !== null) {
      for (const call of message.tool_calls) {
        const answer = history[i++];
        if (answer === undefined) throw new MessageHistoryError(`message history: no tool message answers call ${call.id}`);
        if (answer.role !== "tool") throw new MessageHistoryError(`message history: expected a tool message after call ${call.id}, got ${answer.role}`);
        if (answer.id !== call.id) throw new MessageHistoryError(`message history: tool call id mismatch (${call.id} vs ${answer.id})`);
        pairs.push([call, answer]);
      }
    }
  }
  return pairs;
}
