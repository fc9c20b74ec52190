import { Ajv, type ValidateFunction } from "ajv";
import { LocatedError } from "@envace/errors";
import { toolName, type CallRejectionCode, type ToolCall, type ToolError, type ToolSpec } from "@envace/protocol";
import { findNonFinite, isJsonObject, jsonTypeName } from "./json-value.js";

/** A call checked before the model is asked: accepted, or refused with the protocol's `CallRejectionCode`. */
export type CallCheck = { ok: true; call: ToolCall } | { ok: false; error: ToolError & { code: CallRejectionCode }; callId: string; name: string };

/**
 * How deeply a tool's `parameters` (and a call's `arguments`) may nest: objects and arrays count
 * one level each. Ajv compiles and validates by recursion, so a schema nested 10^5 deep would
 * overflow the stack; real tool schemas stay within a dozen levels.
 */
export const MAX_SCHEMA_DEPTH = 64;

/** A tool's `parameters` nest deeper than `MAX_SCHEMA_DEPTH`: refused before Ajv sees them. */
export class SchemaDepthError extends LocatedError {
  override readonly code = "schema-too-deep";
  constructor(
    where: string,
    readonly limit: number,
  ) {
    super(where, `the JSON Schema nests deeper than ${limit} levels (the limit of the call validator)`);
  }
}

/** A tool's `parameters` that Ajv cannot compile as a JSON Schema (e.g. `{"type": "dict"}`). */
export class ToolSchemaError extends LocatedError {
  override readonly code = "tool-schema";
}

/**
 * The path to the first object or array nested deeper than `limit` levels in `value` (the value
 * itself is level 1), or undefined when none is. Walked without recursion, so any depth is safe.
 */
export function pathBeyondDepth(value: unknown, limit: number): (string | number)[] | undefined {
  interface Node {
    value: unknown;
    depth: number;
    key: string | number | undefined;
    parent: Node | undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  // Only objects and arrays go on the stack: scalars cannot be too deep.
  const stack: Node[] = [{ value, depth: 1, key: undefined, parent: undefined }];
  const visit = (child: unknown, key: string | number, parent: Node): void => {
    if (typeof child === "object" && child !== null) stack.push({ value: child, depth: parent.depth + 1, key, parent });
  };
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.depth > limit) {
      const path: (string | number)[] = [];
      for (let at: Node | undefined = node; at?.key !== undefined; at = at.parent) path.push(at.key);
      return path.reverse();
    }
    if (Array.isArray(node.value)) {
      for (let i = node.value.length - 1; i >= 0; i -= 1) visit(node.value[i], i, node);
    } else {
      const entries = Object.entries(node.value as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i -= 1) visit(entries[i]![1], entries[i]![0], node);
    }
  }
  return undefined;
}

/**
 * Compiled validators shared by schema text, since every task of a dataset usually carries its
 * own copy of the same tool specs. Ajv keeps every schema it compiles in caches of its own
 * (keyed by the schema object, and by every `$id` inside it) that nothing evicts, so the
 * compiler lives for one generation: after `limit` compiles a fresh Ajv takes over and this
 * cache starts empty. What it retains is one Ajv holding at most `limit` schemas, however many
 * distinct schemas clients send; validators handed out earlier keep working.
 */
export class SchemaCache {
  #ajv = newAjv();
  #compiles = 0;
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(readonly limit = 4096) {}

  compile(schema: Record<string, unknown>): ValidateFunction {
    // OpenAI tool schemas are draft-07 in practice; a declared `$schema` would only make Ajv refuse them.
    const { $schema: _ignored, ...rest } = schema;
    const key = JSON.stringify(rest);
    const known = this.#validators.get(key);
    if (known !== undefined) return known;
    if (this.#compiles >= this.limit) {
      this.#ajv = newAjv();
      this.#compiles = 0;
      this.#validators.clear();
    }
    // Counted before compiling: Ajv caches a schema that then fails to compile too.
    this.#compiles += 1;
    const validate = this.#ajv.compile(rest);
    this.#validators.set(key, validate);
    return validate;
  }

  /** The validators kept, and the schemas the current Ajv holds in its own cache (its meta-schema included). */
  get stats(): { validators: number; ajvSchemas: number } {
    return { validators: this.#validators.size, ajvSchemas: (this.#ajv as unknown as { _cache: Map<unknown, unknown> })._cache.size };
  }
}

function newAjv(): Ajv {
  return new Ajv({ allErrors: true, strict: false, logger: false });
}

/** The validators of every `ToolCallValidator`. */
const schemaCache = new SchemaCache();
// Only for error texts, which depend on no schema.
const errorTexts = newAjv();

/**
 * Checks a tool call the way the rehearsal environment does before it asks the model, in order:
 * the call's shape (`INVALID_TOOL_CALL_FORMAT`), the tool whitelist (`TOOL_NOT_AVAILABLE`), and the
 * arguments against the tool's JSON Schema with Ajv (`INVALID_PARAMETERS`).
 *
 * Construction throws if a tool's `parameters` is not a valid JSON Schema, naming the tool: that is
 * a broken task, not model output; parameters nested deeper than `MAX_SCHEMA_DEPTH` throw a
 * `SchemaDepthError`.
 */
export class ToolCallValidator {
  readonly #tools = new Map<string, ValidateFunction | undefined>();

  constructor(tools: readonly ToolSpec[]) {
    for (const tool of tools) {
      const parameters = tool.function.parameters;
      if (parameters !== undefined && pathBeyondDepth(parameters, MAX_SCHEMA_DEPTH) !== undefined) {
        throw new SchemaDepthError(`tool "${toolName(tool)}" parameters`, MAX_SCHEMA_DEPTH);
      }
      try {
        this.#tools.set(toolName(tool), parameters === undefined ? undefined : schemaCache.compile(parameters));
      } catch (error) {
        throw new ToolSchemaError(`tool "${toolName(tool)}"`, `parameters are not a valid JSON Schema (${(error as Error).message})`, { cause: error });
      }
    }
  }

  /** The names of the tools calls may use. */
  get names(): string[] {
    return [...this.#tools.keys()];
  }

  check(call: unknown): CallCheck {
    const raw = (isJsonObject(call) ? call : {}) as { id?: unknown; name?: unknown; arguments?: unknown };
    const id = typeof raw.id === "string" && raw.id.length > 0 ? raw.id : undefined;
    const name = typeof raw.name === "string" && raw.name.length > 0 ? raw.name : undefined;
    const problem = !isJsonObject(call)
      ? `expected an object, got a JSON ${jsonTypeName(call)}`
      : id === undefined
        ? "the call has no id"
        : name === undefined
          ? "the call has no tool name"
          : !isJsonObject(raw.arguments)
            ? `arguments must be a JSON object, got ${jsonTypeName(raw.arguments)}`
            : findNonFinite(raw.arguments) !== undefined
              ? "arguments hold a number JSON cannot carry"
              : pathBeyondDepth(raw.arguments, MAX_SCHEMA_DEPTH) !== undefined
                ? `arguments nest deeper than ${MAX_SCHEMA_DEPTH} levels`
                : undefined;
    if (problem !== undefined) {
      return reject(id ?? "invalid-call", name ?? "unknown", "INVALID_TOOL_CALL_FORMAT", `The tool call is malformed: ${problem}.`);
    }
    const parsed = call as ToolCall;
    if (!this.#tools.has(parsed.name)) {
      return reject(
        parsed.id,
        parsed.name,
        "TOOL_NOT_AVAILABLE",
        `Tool "${parsed.name}" is not available. Available tools: ${this.names.join(", ") || "none"}.`,
      );
    }
    const validate = this.#tools.get(parsed.name);
    if (validate !== undefined && !validate(parsed.arguments)) {
      return reject(
        parsed.id,
        parsed.name,
        "INVALID_PARAMETERS",
        `Invalid parameters for "${parsed.name}": ${errorTexts.errorsText(validate.errors, { dataVar: "arguments" })}.`,
      );
    }
    return { ok: true, call: parsed };
  }
}

function reject(callId: string, name: string, code: CallRejectionCode, message: string): CallCheck {
  return { ok: false, error: { code, message }, callId, name };
}
