import { readFileSync } from "node:fs";
import { LineCounter, parseDocument } from "yaml";
import { formatPath, InputError } from "@envace/protocol";
import { TrainConfig } from "./schema.js";

/** A bad config: names the file, and per problem the line (YAML) and the key path. */
export class ConfigError extends InputError {
  override readonly code: string = "config";
  override readonly name = "ConfigError";
}

/** Parse config text (YAML, of which JSON is a subset) and validate it. `file` names it in errors. */
export function parseConfig(text: string, file: string): TrainConfig {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  if (document.errors.length > 0) {
    const problems = document.errors.map((e) => `${file}:${lineCounter.linePos(e.pos[0]).line}: ${e.message.split("\n")[0]}`);
    throw new ConfigError(problems.join("\n"));
  }
  const value = (document.toJS() as unknown) ?? {};
  const result = TrainConfig.safeParse(value);
  // The schema's last step fills in the defaults that depend on other sections; its type cannot say so.
  if (result.success) return result.data as TrainConfig;
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.filter((k): k is string | number => typeof k !== "symbol");
    const keys = issue.code === "unrecognized_keys" ? issue.keys.map((k) => [...path, k]) : [path];
    return keys
      .map((keyPath) => {
        const node = document.getIn(keyPath, true) as { range?: [number, number, number] } | undefined;
        const keyNode = keyPath.length > 0 ? findKeyLine(document, keyPath, lineCounter) : undefined;
        const line = keyNode ?? (node?.range ? lineCounter.linePos(node.range[0]).line : undefined);
        const where = line === undefined ? file : `${file}:${line}`;
        const name = formatPath(keyPath) || "(top level)";
        const message = issue.code === "unrecognized_keys" ? "unknown key" : issue.message;
        return `${where}: ${name}: ${message}`;
      })
      .join("\n");
  });
  throw new ConfigError(problems.join("\n"));
}

/** The line of the key `path` itself (so a missing or wrong value still points at its key). */
function findKeyLine(document: ReturnType<typeof parseDocument>, path: (string | number)[], lineCounter: LineCounter): number | undefined {
  const parent: unknown = path.length === 1 ? document.contents : document.getIn(path.slice(0, -1), true);
  const items = (parent as { items?: { key?: { value?: unknown; range?: [number, number, number] } }[] } | null)?.items;
  const last = path[path.length - 1];
  const pair = items?.find((item) => item.key?.value === last);
  return pair?.key?.range ? lineCounter.linePos(pair.key.range[0]).line : undefined;
}

/** Read and validate a config file. */
export function loadConfig(path: string): TrainConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`${path}: cannot read config (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, { cause: error });
  }
  return parseConfig(text, path);
}
