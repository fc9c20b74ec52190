import { z } from "zod";

// Zod schemas over Python values (see `jsonLoads` in `@envace/python-text`): they validate a database file the way
// pydantic's lax mode does and produce typed models whose dicts are `Map`s, ints `bigint`s
// and floats `number`s, with model fields in declaration order.

export const pyStr = z.string();

export const pyBool = z.boolean();

/** pydantic `int`: ints, and floats without a fractional part. */
export const pyInt = z.union(
  [
    z.bigint(),
    z
      .number()
      .int()
      .transform((value) => BigInt(value)),
  ],
  { error: "Input should be a valid integer" },
);

/** pydantic `float`: floats, and ints (which become floats, so `5` is dumped as `5.0`). */
export const pyFloat = z.union([z.number(), z.bigint().transform((value) => Number(value))], { error: "Input should be a valid number" });

/** pydantic `Dict[str, V]`, order kept. */
export function pyDict<V extends z.ZodType>(value: V): z.ZodMap<z.ZodString, V> {
  return z.map(z.string(), value);
}

function mapToObject(value: unknown): unknown {
  return value instanceof Map ? Object.fromEntries(value) : value;
}

/** A pydantic model: unknown keys are ignored and the output keeps the declaration order. */
export function pyModel<S extends z.ZodRawShape>(shape: S) {
  return z.preprocess(mapToObject, z.object(shape));
}

/** A pydantic model with `extra="forbid"` (τ²'s database roots). */
export function pyStrictModel<S extends z.ZodRawShape>(shape: S) {
  return z.preprocess(mapToObject, z.strictObject(shape));
}

/** A union of models told apart by a literal field, such as payment methods by `source`. */
export function pyTaggedUnion<const K extends string, const Members extends readonly [z.ZodObject, ...z.ZodObject[]]>(key: K, members: Members) {
  return z.preprocess(mapToObject, z.discriminatedUnion(key, members));
}

/** `Optional[T] = None`. */
export function pyOptional<T extends z.ZodType>(inner: T) {
  return inner.nullable().default(null);
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * pydantic `datetime.date`, kept as the text `str(date)` gives (`2025-01-05`): that is what
 * `json.dumps(..., default=str)` writes, so hashes and responses need nothing else.
 */
export const pyDate = z.string().regex(DATE, "Input should be a valid date in the format YYYY-MM-DD");

/**
 * pydantic `datetime.datetime` from ISO text, kept as `str(datetime)`: a space, not `T`
 * (`2025-01-20 14:30:00`), microseconds only when there are any, `+00:00` for `Z`.
 */
export const pyDateTime = z.string().transform((text, context) => {
  const match = DATETIME.exec(text);
  if (match === null) {
    context.addIssue({ code: "custom", message: "Input should be a valid datetime (YYYY-MM-DDTHH:MM:SS)" });
    return z.NEVER;
  }
  const [, day, hours = "00", minutes = "00", seconds = "00", fraction, zone] = match;
  const micro = fraction === undefined || /^0+$/.test(fraction) ? "" : `.${fraction.padEnd(6, "0")}`;
  const offset = zone === undefined ? "" : zone === "Z" ? "+00:00" : zone.includes(":") ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  return `${day} ${hours}:${minutes}:${seconds}${micro}${offset}`;
});
