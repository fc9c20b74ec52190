// Raw HTTP/1.1 on a socket, for targets and methods that fetch and the `openai` client would normalise away.
import { connect } from "node:net";

export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** Send `request` (already framed) to 127.0.0.1:`port` and read the answer until the server closes, or 5 s pass. */
export function rawExchange(port: number, request: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error("no answer within 5 s")), 5000);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const head = end < 0 ? text : text.slice(0, end);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
      resolve({ status: status === undefined ? 0 : Number(status), head, body: end < 0 ? "" : text.slice(end + 4) });
    });
    // Not end(): a half-closed connection reads as a client that went away.
    socket.write(request);
  });
}

/** One request, `connection: close`, with a body when given one. */
export function rawRequest(port: number, method: string, target: string, headers: Record<string, string> = {}, body?: string | Uint8Array): Promise<RawAnswer> {
  const lines = [`${method} ${target} HTTP/1.1`, `host: 127.0.0.1:${port}`, "connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
  if (body !== undefined) lines.push(`content-length: ${bytes.length}`);
  return rawExchange(port, Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), bytes]));
}

/**
 * The lines of `fastify.printRoutes({ commonPrefix: false })` as routes: each path (nested lines
 * joined to their parent's) with each of its methods.
 */
export function routesOf(printed: string): { method: string; url: string }[] {
  const routes: { method: string; url: string }[] = [];
  const stack: string[] = [];
  for (const line of printed.split("\n")) {
    const match = /^((?:[│ ] {3})*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (match === null) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    const url = (stack[depth - 1] ?? "") + match[2]!;
    stack[depth] = url;
    for (const method of match[3]?.split(", ") ?? []) routes.push({ method, url });
  }
  return routes;
}
