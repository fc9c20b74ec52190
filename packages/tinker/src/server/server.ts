import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { TinkerUsageError } from "../errors.js";
import { isLoopbackHost } from "./auth.js";
import { TinkerServerCore } from "./core.js";
import type { TinkerServer, TinkerServerOptions } from "./options.js";

/** The shortest API key accepted beyond loopback. */
export const MIN_REMOTE_KEY_LENGTH = 32;

/**
 * Refuse, before listening, a server that anyone on the network could drive: beyond loopback it
 * needs API keys, each of at least `MIN_REMOTE_KEY_LENGTH` characters.
 */
export function checkExposure(options: Pick<TinkerServerOptions, "host" | "apiKey">): void {
  const host = options.host ?? "127.0.0.1";
  if (isLoopbackHost(host)) return;
  const keys = typeof options.apiKey === "string" ? [options.apiKey] : (options.apiKey ?? []);
  if (keys.length === 0) {
    throw new TinkerUsageError(
      `refusing to listen on ${host} without an API key: set apiKey (at least ${MIN_REMOTE_KEY_LENGTH} characters), or bind to 127.0.0.1`,
    );
  }
  if (keys.some((key) => key.length < MIN_REMOTE_KEY_LENGTH)) {
    throw new TinkerUsageError(`refusing to listen on ${host}: every apiKey needs at least ${MIN_REMOTE_KEY_LENGTH} characters beyond loopback`);
  }
}

/** Start a Tinker-compatible server on `host:port` (default 127.0.0.1 and a free port). */
export async function startTinkerServer(options: TinkerServerOptions): Promise<TinkerServer> {
  checkExposure(options);
  const core = new TinkerServerCore(options);
  const server: Server = createServer(core.handle);
  // A long poll must not be cut by the default request timeout.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  }).catch((error: unknown) => {
    core.close();
    throw error;
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        core.close();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
