import { createHash, timingSafeEqual } from "node:crypto";

/** Who a request acts for: the id of the key it presented, or `anonymous` where the server has no keys. */
export type Caller = string;

export const ANONYMOUS: Caller = "anonymous";

/** The id a key is known by in records (a checkpoint's owner): its SHA-256, never the key itself. */
export function keyId(key: string): Caller {
  return `sha256:${createHash("sha256").update(key, "utf8").digest("hex")}`;
}

/**
 * The server's API keys. A presented key is hashed and compared with every configured key's hash
 * in constant time, with no early exit, so neither the position of a wrong byte nor which key
 * matched shows in the time taken.
 */
export class ApiKeys {
  private readonly digests: { digest: Buffer; id: Caller }[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map((key) => ({ digest: createHash("sha256").update(key, "utf8").digest(), id: keyId(key) }));
  }

  get required(): boolean {
    return this.digests.length > 0;
  }

  /** The caller a request's `X-API-Key` header stands for, or undefined when it opens nothing. */
  check(header: string | string[] | undefined): Caller | undefined {
    if (!this.required) return ANONYMOUS;
    const given = createHash("sha256")
      .update(typeof header === "string" ? header : "", "utf8")
      .digest();
    let found: Caller | undefined;
    for (const { digest, id } of this.digests) {
      // Every key is compared, whatever matched before.
      const equal = timingSafeEqual(digest, given);
      if (equal && typeof header === "string" && header.length > 0) found = id;
    }
    return found;
  }
}

/** Whether `host` accepts connections from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
