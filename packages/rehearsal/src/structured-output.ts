import { splitReasoning } from "@envace/trajectory";

/** Reading a tagged JSON object out of model output, never throwing. */
export type TaggedObject = { ok: true; value: Record<string, unknown> } | { ok: false; problem: string };

/**
 * The JSON object of a reflect or summarize output: optional leading `<think>` reasoning, then
 * `<tag>{…}</tag>` (a block left open at the end is read to the end), or, without the tag, the
 * output itself. A Markdown code fence around the JSON is tolerated, and so is prose around it
 * (the text from the first `{` to the last `}` is tried).
 */
export function readTaggedObject(text: string, tag: string): TaggedObject {
  const split = splitReasoning(text);
  if (!split.closed) return { ok: false, problem: "the reasoning block never closed" };
  const open = `<${tag}>`;
  const start = split.content.indexOf(open);
  let body = split.content;
  if (start >= 0) {
    const end = split.content.indexOf(`</${tag}>`, start + open.length);
    body = split.content.slice(start + open.length, end < 0 ? undefined : end);
  }
  body = body.trim();
  const fenced = /^```[A-Za-z]*\n([\s\S]*?)\n?```$/.exec(body);
  if (fenced !== null) body = fenced[1]!.trim();
  if (body.length === 0) return { ok: false, problem: start >= 0 ? `${open} is empty` : "empty output" };
  const value = parseObject(body) ?? parseObject(body.slice(body.indexOf("{"), body.lastIndexOf("}") + 1));
  if (value === undefined) return { ok: false, problem: `no JSON object${start >= 0 ? ` in ${open}` : ` and no ${open}`}` };
  return { ok: true, value };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (text.length === 0) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The first of `keys` present in `object`, compared case-insensitively and ignoring `_`/`-`. */
export function field(object: Record<string, unknown>, keys: readonly string[]): { found: boolean; value: unknown } {
  const normal = (key: string): string => key.toLowerCase().replace(/[_-]/g, "");
  const wanted = keys.map(normal);
  for (const want of wanted) {
    const key = Object.keys(object).find((k) => normal(k) === want);
    if (key !== undefined) return { found: true, value: object[key] };
  }
  return { found: false, value: undefined };
}

/** A string field: a string, or a list of strings joined with "; ". `undefined` for anything else. */
export function asText(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim();
  if (Array.isArray(value) && value.every((v) => typeof v === "string"))
    return value
      .map((v) => v.trim())
      .filter(Boolean)
      .join("; ");
  return undefined;
}
