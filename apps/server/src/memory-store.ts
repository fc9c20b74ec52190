import { createHash } from "node:crypto";
import { abortReason } from "@envace/concurrency";
import type { Message, ToolSpec } from "@envace/protocol";
import { canonicalJson, sha256Hex } from "@envace/records";

/** One value being built, and the signal of the request that builds it. */
interface Flight<V> {
  promise: Promise<V>;
  signal: AbortSignal;
}

/**
 * A least-recently-used map bounded both in entries and in bytes: reading an entry makes it the
 * most recent, and adding one evicts the least recent until both bounds hold. An entry larger
 * than the byte bound is not kept at all.
 *
 * `obtain` builds missing values once however many callers ask at the same time (single flight):
 * a caller that finds the value being built waits for it. At most `maxInFlight` builds are shared
 * at a time (beyond that a build runs unshared; the server's generation slots keep it far lower);
 * a failed build is not kept.
 */
export class LruStore<V> {
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  readonly #inFlight = new Map<string, Flight<V>>();
  #bytes = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
    readonly maxInFlight = 256,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Values being built now. */
  get building(): number {
    return this.#inFlight.size;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxBytes || this.maxEntries < 1) return;
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.maxEntries && this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  /**
   * The value under the first of `keys` that has one, stored or being built (then this waits for
   * it: `built: false`); else `build()`'s, stored under `keys[0]` with `size(value)` bytes. A
   * waiter whose builder was cancelled (its client left) tries again on its own; any other
   * failure of the build is the waiter's too. `signal` cancels the waiting and the build.
   */
  async obtain(keys: readonly string[], build: () => Promise<V>, size: (value: V) => number, signal: AbortSignal): Promise<{ value: V; built: boolean }> {
    for (;;) {
      signal.throwIfAborted();
      let flight: Flight<V> | undefined;
      let at = "";
      for (const key of keys) {
        const stored = this.get(key);
        if (stored !== undefined) return { value: stored, built: false };
        flight = this.#inFlight.get(key);
        at = key;
        if (flight !== undefined) break;
      }
      if (flight === undefined) return { value: await this.#build(keys[0]!, build, size, signal), built: true };
      try {
        return { value: await untilAborted(flight.promise, signal), built: false };
      } catch (error) {
        if (signal.aborted || !flight.signal.aborted) throw error;
        // The builder has cleared its flight by now; never wait on a failed one twice.
        if (this.#inFlight.get(at) === flight) this.#inFlight.delete(at);
      }
    }
  }

  async #build(key: string, build: () => Promise<V>, size: (value: V) => number, signal: AbortSignal): Promise<V> {
    const shared = this.#inFlight.size < this.maxInFlight;
    const promise = build().then((value) => {
      this.set(key, value, size(value));
      return value;
    });
    if (!shared) return promise;
    this.#inFlight.set(key, { promise, signal });
    try {
      return await promise;
    } finally {
      this.#inFlight.delete(key);
    }
  }
}

/** `promise`, or the abort of `signal`, whichever comes first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * The scope of a conversation's rehearsal memory: everything besides the messages that shapes
 * it or may read it. Who asked (the bearer token's hash, so one client never reads another's
 * memory), the tools, the rehearsal setting and the memory budget. The server's own rehearsal
 * config is the same for every request of a process, so it needs no place here.
 */
export function memoryScope(owner: string, tools: readonly ToolSpec[], rehearsal: string, memoryBudget: number | null): string {
  return sha256Hex(canonicalJson({ owner: sha256Hex(owner), tools, rehearsal, memory_budget: memoryBudget }));
}

/**
 * The key of every prefix of a conversation, longest first: element `i` is the key of the
 * messages before `messages.length - i`. A memory is stored under the key of exactly the messages
 * it was built from, so a later request finds it only when its conversation extends those
 * messages: a request that shares only the opening never sees turns it did not send. Each key
 * chains the one before with the canonical JSON hash of one message, so all of them cost one
 * pass over the conversation.
 */
export function prefixKeys(scope: string, messages: readonly Message[]): string[] {
  const keys: string[] = [];
  let key = scope;
  for (const message of messages) {
    key = createHash("sha256")
      .update(key)
      .update("\n")
      .update(sha256Hex(canonicalJson(message)))
      .digest("hex");
    keys.push(key);
  }
  return keys.reverse();
}
