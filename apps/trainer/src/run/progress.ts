import cliProgress from "cli-progress";

/** Formats seconds as `1h02m`, `3m05s` or `12s`; `?` while there is no estimate yet. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "?";
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${s}s`;
}

/** cli-progress's bar, whose redraw timer does not keep a finished or failed command alive. */
class Bar extends cliProgress.SingleBar {
  override render(): void {
    super.render();
    // The library re-arms a plain timer after every redraw; a command that stops early (an
    // error, a signal) must still exit.
    (this as unknown as { timer: NodeJS.Timeout | null }).timer?.unref();
  }
}

/**
 * A progress bar on stderr: `label [#####-----] 5/10 50% 12s ETA 12s extra`. On a terminal it
 * redraws one line; elsewhere (CI logs, pipes) it prints a line every `intervalMs` and at the
 * end, so logs stay readable. It stops by itself when `done` reaches `total`.
 */
export class ProgressBar {
  readonly #bar: Bar;

  constructor(label: string, total: number, stream: NodeJS.WritableStream = process.stderr, intervalMs = 5_000) {
    this.#bar = new Bar({
      format: `${label} [{bar}] {value}/{total} {percentage}% {duration_formatted} ETA {eta_formatted} {extra}`,
      stream,
      barsize: 24,
      barCompleteChar: "#",
      barIncompleteChar: "-",
      hideCursor: false,
      gracefulExit: false,
      noTTYOutput: true,
      notTTYSchedule: intervalMs,
      stopOnComplete: true,
      etaBuffer: 50,
      formatTime: (seconds) => formatDuration(seconds),
    });
    this.#bar.start(total, 0, { extra: "" });
  }

  tick(extra = "", amount = 1): void {
    this.#bar.increment(amount, { extra });
  }

  /** Ends the bar where it is (a run that stops before `total`); a no-op once stopped. */
  stop(): void {
    this.#bar.stop();
  }
}
