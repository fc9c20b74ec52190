import { Ajv, type ValidateFunction } from "ajv";
import { z } from "zod";
import { toolName, type ToolCall, type ToolError, type ToolSpec } from "@envace/protocol";
import { findNonFinite, isJsonObject, jsonTypeName } from "./json-value.js";

/** Why a rehearsal environment refuses a call before asking the model, in the order checked. */
export const CallRejectionCode = z.enum(["INVALID_TOOL_CALL_FORMAT", "TOOL_NOT_AVAILABLE", "INVALID_PARAMETERS"]);
export type CallRejectionCode = z.infer<typeof CallRejectionCode>;

export type CallCheck =
  | { ok: true; call: ToolCall }
  | { ok: false; error: ToolError & { code: CallRejectionCode }; callId: string; name: string };

// One compiler for every validator; compiled schemas are shared by content, since every task
// of a dataset usually carries its own copy of the same tool specs.
const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
const compiled = new Map<string, ValidateFunction>();
const COMPILED_LIMIT = 4096;

function compile(schema: Record<string, unknown>): ValidateFunction {
  // OpenAI tool schemas are draft-07 in practice; a declared `$schema` would only make Ajv refuse them.
  const { $schema: _ignored, ...rest } = schema;
  const key = JSON.stringify(rest);
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = ajv.compile(rest);
    if (compiled.size >= COMPILED_LIMIT) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, validate);
  }
  return validate;
}

/**
 * Checks a tool call the way the rehearsal environment does before it asks the model, in order:
 * the call's shape (`INVALID_TOOL_CALL_FORMAT`), the tool whitelist (`TOOL_NOT_AVAILABLE`), and the
 * arguments against the tool's JSON Schema with Ajv (`INVALID_PARAMETERS`).
 *
 * Construction throws if a tool's `parameters` is not a valid JSON Schema, naming the tool: that is
 * a broken task, not model output.
 */
export class ToolCallValidator {
  readonly #tools = new Map<string, ValidateFunction | undefined>();

  constructor(tools: readonly ToolSpec[]) {
    for (const tool of tools) {
      const parameters = tool.function.parameters;
      try {
        this.#tools.set(toolName(tool), parameters === undefined ? undefined : compile(parameters));
      } catch (error) {
        throw new Error(`tool "${toolName(tool)}": parameters are not a valid JSON Schema (${(error as Error).message})`, {
          cause: error,
        });
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
        `Invalid parameters for "${parsed.name}": ${ajv.errorsText(validate.errors, { dataVar: "arguments" })}.`,
      );
    }
    return { ok: true, call: parsed };
  }
}

function reject(callId: string, name: string, code: CallRejectionCode, message: string): CallCheck {
  return { ok: false, error: { code, message }, callId, name };
}
