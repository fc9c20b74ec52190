// What every `envace` command does with its arguments: parse them, answer --help, and turn a
// usage problem into the command's name, the reason and the usage text, with exit code 2.
import { parseArgs, type ParseArgsConfig } from "node:util";

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig["options"]>;

type Values<O extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ args: string[]; options: O }>>["values"];

/** A command line that cannot run: `fail` prints it with the usage text. */
export interface CommandLine {
  command: string;
  usage: string;
}

/** Print `message` for `line` with its usage and return the exit code of a usage error (2). */
export function fail(line: CommandLine, message: string): number {
  console.error(`envace ${line.command}: ${message}\n\n${line.usage}`);
  return 2;
}

/**
 * The option values of `argv`, or the exit code to return at once: 0 after printing the usage
 * for `--help`, 2 after explaining an unknown or malformed option.
 */
export function parseCommandLine<const O extends ParseArgsOptionsConfig>(line: CommandLine, argv: string[], options: O): { values: Values<O> } | { exit: number } {
  let values: Values<O>;
  try {
    ({ values } = parseArgs({ args: argv, options }));
  } catch (error) {
    return { exit: fail(line, (error as Error).message) };
  }
  if ((values as { help?: boolean }).help === true) {
    console.log(line.usage);
    return { exit: 0 };
  }
  return { values };
}

/** `--name` as a whole number ≥ 1, or undefined when absent. */
export function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number, got ${JSON.stringify(value)}`);
  return n;
}

/** `--name` as a finite number ≥ 0, or undefined when absent. */
export function nonNegative(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got ${JSON.stringify(value)}`);
  return n;
}
