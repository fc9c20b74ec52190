import { iterate, PyException, pyTypeName, type PyValue, truthy as pyTruthy, typeError } from "@envace/python-text";

/*
 * The few Python operations VitaBench's tools apply to the agent's raw arguments (they are never
 * checked against the tool schema), with CPython 3.11's messages for the wrong types.
 */

/** `assert condition, message`: the tool wrapper turns it into a plain answer, not an error. */
export function pyAssert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new PyException("AssertionError", message);
}

/** Python's truth value; a missing argument is `None`. */
export function truthy(value: PyValue | undefined): boolean {
  return pyTruthy(value ?? null);
}

/** A number as Python arithmetic sees it (`True` is 1), or undefined for other types. */
export function asNumber(value: PyValue | undefined): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number") return value;
  return undefined;
}

type Comparison = ">" | ">=" | "<" | "<=";

/** `a op b` for numbers and for strings; other pairs raise CPython's `TypeError`. */
export function compare(a: PyValue | undefined, op: Comparison, b: PyValue | undefined): boolean {
  const x = asNumber(a);
  const y = asNumber(b);
  let order: number | undefined;
  if (x !== undefined && y !== undefined) order = x < y ? -1 : x > y ? 1 : 0;
  else if (typeof a === "string" && typeof b === "string") order = a < b ? -1 : a > b ? 1 : 0;
  if (order === undefined) {
    throw typeError(`'${op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
  }
  if (op === ">") return order > 0;
  if (op === ">=") return order >= 0;
  if (op === "<") return order < 0;
  return order <= 0;
}

/** `key in some_dict`: unhashable keys raise; keys of another type are simply absent. */
export function hasKey(map: ReadonlyMap<string, unknown>, key: PyValue | undefined): key is string {
  if (Array.isArray(key) || key instanceof Map) throw typeError(`unhashable type: '${pyTypeName(key)}'`);
  return typeof key === "string" && map.has(key);
}

/** `"".join(value)`. */
export function joinStrings(value: PyValue | undefined): string {
  if (typeof value !== "string" && !Array.isArray(value) && !(value instanceof Map)) throw typeError("can only join an iterable");
  const items = iterate(value);
  items.forEach((item, index) => {
    if (typeof item !== "string") throw typeError(`sequence item ${index}: expected str instance, ${pyTypeName(item)} found`);
  });
  return (items as string[]).join("");
}

/** `math.radians(x)`: only real numbers. */
export function radians(value: PyValue | undefined): number {
  const x = asNumber(value);
  if (x === undefined) throw typeError(`must be real number, not ${pyTypeName(value)}`);
  return x * (Math.PI / 180);
}

/** A naive datetime as its fields, for `strptime` and `timedelta` arithmetic. */
export interface DateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

// CPython's `_strptime` patterns for the directives VitaBench uses; whitespace in the format
// matches any run of whitespace, and the whole string must match (case-insensitively).
const DIRECTIVES: Readonly<Record<string, string>> = {
  Y: "(\\d\\d\\d\\d)",
  m: "(1[0-2]|0[1-9]|[1-9])",
  d: "(3[01]|[12]\\d|0[1-9]|[1-9]| [1-9])",
  H: "(2[0-3]|[0-1]\\d|\\d)",
  M: "([0-5]\\d|\\d)",
  S: "(6[0-1]|[0-5]\\d|\\d)",
};
const PATTERNS = new Map<string, { regex: RegExp; fields: string[] }>();

function compileFormat(format: string): { regex: RegExp; fields: string[] } {
  let cached = PATTERNS.get(format);
  if (cached !== undefined) return cached;
  const fields: string[] = [];
  let source = "";
  for (let i = 0; i < format.length; i++) {
    const ch = format[i]!;
    if (ch === "%") {
      const directive = format[++i]!;
      source += DIRECTIVES[directive]!;
      fields.push(directive);
    } else if (/\s/.test(ch)) {
      source += "\\s+";
      while (i + 1 < format.length && /\s/.test(format[i + 1]!)) i++;
    } else {
      source += ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    }
  }
  cached = { regex: new RegExp(`^(?:${source})$`, "i"), fields };
  PATTERNS.set(format, cached);
  return cached;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** `datetime.strptime(text, format)`, or undefined where Python raises `ValueError`. */
export function strptime(text: PyValue | undefined, format: string): DateTime | undefined {
  if (typeof text !== "string") throw typeError(`strptime() argument 1 must be str, not ${pyTypeName(text)}`);
  const { regex, fields } = compileFormat(format);
  const match = regex.exec(text);
  if (match === null) return undefined;
  const parts: Record<string, number> = { Y: 1900, m: 1, d: 1, H: 0, M: 0, S: 0 };
  fields.forEach((field, i) => (parts[field] = Number.parseInt(match[i + 1]!.trim(), 10)));
  const value = { year: parts.Y!, month: parts.m!, day: parts.d!, hour: parts.H!, minute: parts.M!, second: parts.S! };
  if (value.year < 1 || value.day > daysInMonth(value.year, value.month) || value.second > 59) return undefined;
  return value;
}

/** VitaBench's `check_time_format`: does `strptime` accept it? (A non-string still raises.) */
export function checkTimeFormat(text: PyValue | undefined, format = "%Y-%m-%d %H:%M:%S"): boolean {
  return strptime(text, format) !== undefined;
}

/** Seconds since the epoch of a naive datetime read as UTC. */
export function epochSeconds(value: DateTime): number {
  return Date.UTC(value.year, value.month - 1, value.day, value.hour, value.minute, value.second) / 1000;
}

/** `(datetime + timedelta(minutes=m)).strftime("%Y-%m-%d %H:%M:%S")`. */
export function addMinutes(value: DateTime, minutes: number): string {
  const date = new Date(epochSeconds(value) * 1000 + Math.round(minutes * 60_000));
  const pad = (n: number, width = 2): string => String(n).padStart(width, "0");
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`
  );
}
