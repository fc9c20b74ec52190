import { readFileSync } from "node:fs";
import { LineCounter, parseDocument, type Document } from "yaml";
import type { z } from "zod";
import { formatPath, InputError } from "@envace/protocol";

/** A config that cannot be used: one line per problem, each naming the file, the line (where known) and the key. */
export class ConfigError extends InputError {
  override readonly code: string = "config";
}

/** Builds the error a caller throws for a bad config (a subclass with its own code, say). */
export type ConfigErrorFactory = (message: string, options?: ErrorOptions) => Error;

const configError: ConfigErrorFactory = (message, options) => new ConfigError(message, options);

/**
 * Parse config text (YAML, of which JSON is a subset) and validate it against `schema`. Every
 * syntax error and every schema problem becomes one line, `file:line: key: message` (an unknown
 * key says so), and all of them are thrown together, so one run shows everything to fix.
 */
export function parseYamlConfig<S extends z.ZodType>(text: string, file: string, schema: S, makeError: ConfigErrorFactory = configError): z.output<S> {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  if (document.errors.length > 0) {
    throw makeError(document.errors.map((e) => `${file}:${lineCounter.linePos(e.pos[0]).line}: ${e.message.split("\n")[0]}`).join("\n"));
  }
  return validate((document.toJS() as unknown) ?? {}, file, schema, makeError, (keyPath) => lineOf(document, keyPath, lineCounter));
}

/**
 * Validate a config already in memory (a caller's object, a file's parsed value) against
 * `schema`, with the same one line per problem as a file, naming `source` and the key.
 */
export function parseConfigValue<S extends z.ZodType>(value: unknown, source: string, schema: S, makeError: ConfigErrorFactory = configError): z.output<S> {
  return validate(value ?? {}, source, schema, makeError, () => undefined);
}

function validate<S extends z.ZodType>(
  value: unknown,
  file: string,
  schema: S,
  makeError: ConfigErrorFactory,
  lineAt: (keyPath: (string | number)[]) => number | undefined,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) => {
    const path = issue.path.filter((k): k is string | number => typeof k !== "symbol");
    const keys = issue.code === "unrecognized_keys" ? issue.keys.map((k) => [...path, k]) : [path];
    return keys.map((keyPath) => {
      const line = lineAt(keyPath);
      const where = line === undefined ? file : `${file}:${line}`;
      const message = issue.code === "unrecognized_keys" ? "unknown key" : issue.message;
      return `${where}: ${formatPath(keyPath) || "(top level)"}: ${message}`;
    });
  });
  throw makeError(problems.join("\n"));
}

/** Read a config file and validate it (`parseYamlConfig`); a file that cannot be read is one line naming it. */
export function loadYamlConfig<S extends z.ZodType>(path: string, schema: S, makeError: ConfigErrorFactory = configError): z.output<S> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw makeError(`${path}: cannot read config (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, { cause: error });
  }
  return parseYamlConfig(text, path, schema, makeError);
}

/** The line of the key at `path` (so a missing or wrong value still points at its key), else of its value. */
function lineOf(document: Document, path: (string | number)[], lineCounter: LineCounter): number | undefined {
  if (path.length > 0) {
    const parent: unknown = path.length === 1 ? document.contents : document.getIn(path.slice(0, -1), true);
    const items = (parent as { items?: { key?: { value?: unknown; range?: [number, number, number] } }[] } | null)?.items;
    const pair = items?.find((item) => item.key?.value === path[path.length - 1]);
    if (pair?.key?.range) return lineCounter.linePos(pair.key.range[0]).line;
  }
  const node = document.getIn(path, true) as { range?: [number, number, number] } | undefined;
  return node?.range ? lineCounter.linePos(node.range[0]).line : undefined;
}
