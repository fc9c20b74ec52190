import { pyRepr, type PyObject, pyTypeName, typeError, valueError } from "@envace/python-text";

/**
 * `datetime.strptime` for the two formats the environments parse (`%Y-%m-%d` and
 * `%Y-%m-%d %H:%M:%S`), with Python's field patterns (one- or two-digit months, days and time
 * fields) and its error messages. A parsed time is returned as milliseconds since the epoch
 * (UTC), which orders like Python's naive datetimes.
 */
const FIELD_PATTERNS: Readonly<Record<string, string>> = {
  "%Y": String.raw`(\d\d\d\d)`,
  "%m": String.raw`(1[0-2]|0[1-9]|[1-9])`,
  "%d": String.raw`(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])`,
  "%H": String.raw`(2[0-3]|[0-1]\d|\d)`,
  "%M": String.raw`([0-5]\d|\d)`,
  "%S": String.raw`(6[0-1]|[0-5]\d|\d)`,
};

export function strptime(text: PyObject, format: string): number {
  if (typeof text !== "string") throw typeError(`strptime() argument 1 must be str, not ${pyTypeName(text)}`);
  const fields = format.match(/%[YmdHMS]/g) ?? [];
  const pattern = format.replace(/%[YmdHMS]/g, (f) => FIELD_PATTERNS[f]!).replace(/ /g, String.raw`\s+`);
  const match = new RegExp(`^${pattern}`, "i").exec(text);
  if (!match) throw valueError(`time data ${pyRepr(text)} does not match format ${pyRepr(format)}`);
  if (match[0].length !== text.length) throw valueError(`unconverted data remains: ${text.slice(match[0].length)}`);
  const value: Record<string, number> = { "%Y": 1900, "%m": 1, "%d": 1, "%H": 0, "%M": 0, "%S": 0 };
  fields.forEach((field, i) => (value[field] = Number(match[i + 1]!.trim())));
  const [year, month, day] = [value["%Y"]!, value["%m"]!, value["%d"]!];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) throw valueError("day is out of range for month");
  if (value["%S"]! > 59) throw valueError("second must be in 0..59");
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(value["%H"]!, value["%M"], value["%S"], 0);
  return date.getTime();
}

/** `datetime.min` and `datetime.max` as milliseconds. */
export const DATETIME_MIN = ((): number => {
  const date = new Date(0);
  date.setUTCFullYear(1, 0, 1);
  return date.getTime();
})();
export const DATETIME_MAX = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** `strftime("%Y-%m-%d %H:%M:%S")` of milliseconds since the epoch (UTC). */
export function formatDateTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2): string => String(n).padStart(w, "0");
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}
