import cliProgress from "cli-progress";

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
