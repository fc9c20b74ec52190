import type { FailureCategory } from "../errors.js";

type FutureState = { status: "pending" } | { status: "done"; result: unknown } | { status: "failed"; error: string; category: FailureCategory };

/** Results the SDK ≥ 0.25 takes as protobuf when it asks for them; everything else is JSON. */
export type ResultKind = "forward_backward" | "sample" | "json";

interface Entry {
  state: FutureState;
  /** The caller that made the request: only it may retrieve the result. */
  owner: string;
  kind: ResultKind;
  waiters: Set<() => void>;
  /** When a settled future is forgotten. */
  expires: number;
}

/** Results of accepted requests, retrievable by request id with a long poll. */
export class FutureStore {
  private readonly entries = new Map<string, Entry>();
  private counter = 0;

  constructor(private readonly ttlMs: number) {}

  create(owner: string, kind: ResultKind = "json"): string {
    const id = `req-${++this.counter}`;
    this.entries.set(id, { state: { status: "pending" }, owner, kind, waiters: new Set(), expires: Infinity });
    return id;
  }

  resolve(id: string, result: unknown): void {
    this.settle(id, { status: "done", result });
  }

  reject(id: string, error: string, category: FailureCategory): void {
    this.settle(id, { status: "failed", error, category });
  }

  private settle(id: string, state: FutureState): void {
    const entry = this.entries.get(id);
    if (entry?.state.status !== "pending") return;
    entry.state = state;
    entry.expires = Date.now() + this.ttlMs;
    for (const wake of entry.waiters) wake();
    entry.waiters.clear();
  }

  /** Whether `id` is a future of `owner`'s (another caller's is as unknown as none). */
  has(id: string, owner: string): boolean {
    return this.entries.get(id)?.owner === owner;
  }

  kindOf(id: string): ResultKind {
    return this.entries.get(id)?.kind ?? "json";
  }

  /** The state of `id` once it settles, or `pending` after `timeoutMs` or when `signal` aborts. */
  async wait(id: string, timeoutMs: number, signal: AbortSignal): Promise<FutureState | undefined> {
    const entry = this.entries.get(id);
    if (entry?.state.status !== "pending") return entry?.state;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        entry.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener("abort", done, { once: true });
      entry.waiters.add(done);
    });
    return entry.state;
  }

  /** Forget settled futures past their time to live. */
  sweep(now = Date.now()): void {
    for (const [id, entry] of this.entries) if (entry.expires < now) this.entries.delete(id);
  }

  /** Wake every long poll (the server is closing). */
  wakeAll(): void {
    for (const entry of this.entries.values()) {
      for (const wake of entry.waiters) wake();
      entry.waiters.clear();
    }
  }
}
