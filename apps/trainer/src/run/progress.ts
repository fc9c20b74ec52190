/** Formats seconds as `1h02m`, `3m05s` or `12s`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "?";
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${s}s`;
}

/** One progress line: `label [#####-----] 5/10 50% 12s ETA 12s extra`. */
export function renderProgress(label: string, done: number, total: number, elapsedSeconds: number, extra = "", width = 24): string {
  const fraction = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(fraction * width);
  const eta = done > 0 ? (elapsedSeconds / done) * (total - done) : Number.NaN;
  const bar = `${"#".repeat(filled)}${"-".repeat(width - filled)}`;
  const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
  return `${label} [${bar}] ${done}/${total} ${percent} ${formatDuration(elapsedSeconds)} ETA ${done >= total ? "0s" : formatDuration(eta)}${extra ? ` ${extra}` : ""}`;
}

/**
 * A progress bar on stderr. On a terminal it redraws one line; elsewhere (CI logs, pipes) it
 * prints a line at most every `intervalMs` and at the end, so logs stay readable.
 */
export class ProgressBar {
  private done = 0;
  private lastPrint = 0;
  private readonly started = Date.now();

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly intervalMs = 5_000,
  ) {}

  tick(extra = "", amount = 1): void {
    this.done += amount;
    this.draw(extra);
  }

  private draw(extra: string): void {
    const line = renderProgress(this.label, this.done, this.total, (Date.now() - this.started) / 1000, extra);
    const finished = this.done >= this.total;
    if (this.stream.isTTY) {
      this.stream.write(`\r\x1b[2K${line}${finished ? "\n" : ""}`);
      return;
    }
    const now = Date.now();
    if (finished || now - this.lastPrint >= this.intervalMs) {
      this.lastPrint = now;
      this.stream.write(`${line}\n`);
    }
  }
}
