// The log of the long-running envace commands (train, eval, serve): one pino logger on stderr, so
// stdout keeps only the tables and results a person or a script reads. Human-readable lines by
// default, JSON lines (one object a line) with `--log-format json`.
import { pino, type LevelWithSilent, type Logger } from "pino";
import { prettyFactory } from "pino-pretty";

export type { Logger };

export type LogFormat = "pretty" | "json";

/** The global `--log-format` and `--log-level` (or `ENVACE_LOG_FORMAT`, `ENVACE_LOG_LEVEL`). */
export interface LogSettings {
  logFormat: LogFormat;
  logLevel: LevelWithSilent;
}

/** Where the log goes: stderr, or what a test gives instead. */
export interface LogStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/**
 * A logger writing every line at once, in the order it was logged: pretty lines are formatted on
 * the calling thread (no worker transport), so a line logged just before the process exits, or
 * between two progress-bar redraws, is not lost or reordered.
 */
export function createLogger(settings: LogSettings, stream: LogStream = process.stderr): Logger {
  const write = (line: string): void => void stream.write(line);
  if (settings.logFormat === "json") return pino({ level: settings.logLevel }, { write });
  const pretty = prettyFactory({ colorize: stream.isTTY === true, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname", singleLine: true });
  return pino({ level: settings.logLevel }, { write: (line: string) => write(pretty(line)) });
}
