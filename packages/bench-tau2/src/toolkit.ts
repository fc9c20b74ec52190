import type { JsonObject, JsonValue, ToolSpec } from "@envace/protocol";
import { attributeError, bindArguments, type PyDict, type PyParam, type PyValue, toJson, valueError } from "@envace/python-text";
import type { Database, DbRoot } from "./database.js";

/**
 * What a tool does, as upstream classifies it. Only `write` tools change the database, and
 * only they are replayed when the evaluator rebuilds the final state from a trajectory.
 */
export type ToolKind = "read" | "write" | "think" | "generic";

/** One parameter of a tool: its JSON Schema for the agent, and an optional default. */
export interface ToolParam extends PyParam {
  readonly schema: JsonObject;
  readonly description: string;
}

/** One tool of a domain, with the exact upstream name, parameters and behaviour. */
export interface ToolDefinition<T extends DbRoot> {
  readonly name: string;
  readonly kind: ToolKind;
  readonly description: string;
  readonly params: readonly ToolParam[];
  /** Runs the tool. Failures are `PyException`s; the return value is what Python returned. */
  run(db: Database<T>, args: ReadonlyMap<string, PyValue>): PyValue;
}

/**
 * A helper that initialisation actions and environment assertions may call by name but the
 * agent may not (`assert_task_status`, `add_notification`).
 */
export interface EnvFunction<T extends DbRoot> {
  readonly name: string;
  readonly params: readonly PyParam[];
  run(db: Database<T>, args: ReadonlyMap<string, PyValue>): PyValue;
}

/** A set of tools over one database, named like the upstream toolkit class for error texts. */
export class Toolkit<T extends DbRoot> {
  private readonly byName: ReadonlyMap<string, ToolDefinition<T>>;
  private readonly functionsByName: ReadonlyMap<string, EnvFunction<T>>;

  constructor(
    /** The upstream class name (`RetailTools`), which Python puts in argument errors. */
    readonly className: string,
    readonly tools: readonly ToolDefinition<T>[],
    functions: readonly EnvFunction<T>[] = [],
  ) {
    this.byName = new Map(tools.map((tool) => [tool.name, tool]));
    this.functionsByName = new Map(functions.map((fn) => [fn.name, fn]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  get(name: string): ToolDefinition<T> | undefined {
    return this.byName.get(name);
  }

  /** Whether a call of `name` can change the database (unknown tools are assumed to). */
  mutates(name: string): boolean {
    const tool = this.byName.get(name);
    return tool === undefined || tool.kind === "write";
  }

  /** `use_tool(name, **kwargs)`: unknown tools raise `Tool '<name>' not found.` */
  use(db: Database<T>, name: string, kwargs: PyDict): PyValue {
    const tool = this.byName.get(name);
    if (tool === undefined) throw valueError(`Tool '${name}' not found.`);
    return tool.run(db, bindArguments(`${this.className}.${name}`, tool.params, kwargs));
  }

  /** `getattr(toolkit, name)(**kwargs)` for initialisation actions and assertions. */
  callFunction(db: Database<T>, name: string, kwargs: PyDict): PyValue {
    const fn = this.functionsByName.get(name) ?? this.byName.get(name);
    if (fn === undefined) throw attributeError(`'${this.className}' object has no attribute '${name}'`);
    return fn.run(db, bindArguments(`${this.className}.${name}`, fn.params, kwargs));
  }

  /** The tools as OpenAI function tools, parameters in pydantic's JSON-Schema layout. */
  specs(): ToolSpec[] {
    return this.tools.map((tool) => toolSpec(tool));
  }
}

function toolSpec<T extends DbRoot>(tool: ToolDefinition<T>): ToolSpec {
  const properties = Object.create(null) as Record<string, JsonValue>;
  for (const param of tool.params) {
    const property: JsonObject = { description: param.description, title: title(param.name), ...param.schema };
    if ("default" in param) property.default = toJson(param.default ?? null);
    properties[param.name] = property;
  }
  const required = tool.params.filter((param) => !("default" in param)).map((param) => param.name);
  const parameters: JsonObject = { properties, required, title: "parameters", type: "object" };
  return { type: "function", function: { name: tool.name, description: tool.description, parameters } };
}

/** pydantic's default field title: `item_ids` → `Item Ids` (Python's `str.title`). */
function title(name: string): string {
  return name.replaceAll("_", " ").replace(/[A-Za-z]+/g, (word) => word[0]!.toUpperCase() + word.slice(1).toLowerCase());
}
