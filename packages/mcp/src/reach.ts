import { lookup as dnsLookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import { isLoopbackAddress, remoteRefused, unresolvedRefused, type RemoteServerRefused } from "./server-spec.js";

/** One resolved address, as `dns.lookup(…, { all: true })` gives it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (default: the system resolver, `dns.lookup`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A `fetch` whose connections go only where the reach rule allows, and how to release it. */
export interface ReachFetch {
  fetch: typeof fetch;
  /** The refusal that stopped a connection, if one did (the SDK rewraps fetch's errors). */
  refused(): RemoteServerRefused | undefined;
  close(): Promise<void>;
}

/**
 * A fetch for the MCP server at `url` that resolves each host once, checks every address the
 * answer holds, and connects to those same addresses: without `allowRemote` every one must be on
 * loopback (127.0.0.0/8, ::1), so a name cannot be pointed elsewhere between the check and the
 * connection (DNS rebinding). Redirects meet the same check.
 */
export function reachFetch(url: string, allowRemote: boolean, resolve: Resolver = systemResolver): ReachFetch {
  let refusal: RemoteServerRefused | undefined;
  const refuse = (address: string): Error => {
    refusal = remoteRefused(url, address);
    return refusal;
  };
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        const outside = allowRemote ? undefined : addresses.find((a) => !isLoopbackAddress(a.address));
        if (outside !== undefined) {
          callback(refuse(outside.address), "", 0);
        } else if (wanted.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
        } else if (options.all === true) {
          (callback as unknown as (error: null, all: ResolvedAddress[]) => void)(null, wanted);
        } else {
          callback(null, wanted[0]!.address, wanted[0]!.family);
        }
      },
      (error: unknown) => {
        if (allowRemote) {
          callback(error as NodeJS.ErrnoException, "", 0);
        } else {
          refusal = unresolvedRefused(url, error);
          callback(refusal, "", 0);
        }
      },
    );
  };
  const connector = buildConnector({ lookup });
  const agent = new Agent({
    connect: (options, callback) => {
      // An address written as such is never looked up: check it here.
      const host = options.hostname.replace(/^\[|\]$/g, "");
      if (!allowRemote && isIP(host) !== 0 && !isLoopbackAddress(host)) {
        callback(refuse(host), null);
        return;
      }
      connector(options, callback);
    },
  });
  const fetchThrough = ((input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { ...init, dispatcher: agent } as Parameters<typeof undiciFetch>[1])) as unknown as typeof fetch;
  return { fetch: fetchThrough, refused: () => refusal, close: () => agent.close() };
}
