import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { TinkerServerCore } from "./core.js";
import type { TinkerServer, TinkerServerOptions } from "./options.js";

/** Start a Tinker-compatible server on `host:port` (default 127.0.0.1 and a free port). */
export async function startTinkerServer(options: TinkerServerOptions): Promise<TinkerServer> {
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
