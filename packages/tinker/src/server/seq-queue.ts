/** What a request's sequence number means for a model's queue. */
export type SeqVerdict =
  { kind: "new" } | { kind: "repeat"; reply: StoredReply } | { kind: "conflict"; message: string } | { kind: "too-far"; message: string };

export interface StoredReply {
  status: number;
  body: unknown;
}

interface Waiting {
  run: () => Promise<void>;
  fail: (message: string) => void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Runs one model's requests strictly in `seq_id` order (1, 2, 3 …), one at a time. A request that
 * arrives early waits for the ones before it (clients may submit chunks in parallel); if the gap is
 * not filled within `gapTimeoutMs` it fails, naming the missing number, and the queue moves past it
 * once the gap fills. Every number is used once: a repeat with the same body gets the same reply
 * (idempotent retries), a different body is a conflict.
 */
export class SeqQueue {
  private next = 1;
  private busy = false;
  private current: Promise<void> = Promise.resolve();
  private readonly waiting = new Map<number, Waiting>();
  private readonly replies = new Map<number, { fingerprint: string; reply: StoredReply }>();

  constructor(
    private readonly label: string,
    private readonly maxAhead: number,
    private readonly gapTimeoutMs: number,
  ) {}

  /** The number the queue runs next. */
  get expected(): number {
    return this.next;
  }

  check(seq: number, fingerprint: string): SeqVerdict {
    const previous = this.replies.get(seq);
    if (previous) {
      if (previous.fingerprint === fingerprint) return { kind: "repeat", reply: previous.reply };
      return { kind: "conflict", message: `seq_id ${seq} of ${this.label} was already used by a different request` };
    }
    if (seq < this.next) {
      return { kind: "conflict", message: `seq_id ${seq} of ${this.label} is already past (next expected: ${this.next})` };
    }
    if (seq >= this.next + this.maxAhead) {
      return {
        kind: "too-far",
        message: `seq_id ${seq} of ${this.label} is too far ahead: the next expected is ${this.next}, and at most ${this.maxAhead} requests may wait`,
      };
    }
    return { kind: "new" };
  }

  /**
   * Take `seq` with the reply its submission got. `run` executes in order; `fail` is called
   * instead if the request gives up waiting for an earlier one or is cancelled. A rejected request
   * takes its number too (with a no-op), so later requests do not wait for it.
   */
  enqueue(seq: number, fingerprint: string, reply: StoredReply, run: () => Promise<void>, fail: (message: string) => void): void {
    this.replies.set(seq, { fingerprint, reply });
    const entry: Waiting = { run, fail, timer: undefined };
    if (seq > this.next) {
      entry.timer = setTimeout(() => {
        entry.run = () => Promise.resolve();
        fail(`seq_id ${seq} of ${this.label} waited ${this.gapTimeoutMs} ms for seq_id ${this.next}, which never arrived`);
      }, this.gapTimeoutMs);
      entry.timer.unref();
    }
    this.waiting.set(seq, entry);
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (let entry = this.waiting.get(this.next); entry; entry = this.waiting.get(this.next)) {
        this.waiting.delete(this.next);
        this.next += 1;
        clearTimeout(entry.timer);
        this.current = entry.run();
        await this.current;
      }
    } finally {
      this.busy = false;
    }
  }

  /** Fail every waiting request with `message` (the model is being unloaded). */
  cancel(message: string): void {
    for (const entry of this.waiting.values()) {
      clearTimeout(entry.timer);
      entry.fail(message);
    }
    this.waiting.clear();
  }

  /** Resolves once the request running now (if any) has finished. */
  async drained(): Promise<void> {
    while (this.busy) await this.current;
  }
}
