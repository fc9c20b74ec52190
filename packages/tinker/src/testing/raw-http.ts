import { connect } from "node:net";

/**
 * Send one request exactly as written (method, target and headers unchanged) on a raw socket and
 * return the status of the reply: what `fetch` would normalize away, a server sees as sent.
 */
export function rawRequest(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body: string | Uint8Array = "",
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no reply to ${method} ${target}`)));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!match) reject(new Error(`no HTTP reply to ${method} ${target}: ${JSON.stringify(text.slice(0, 80))}`));
      else resolve({ status: Number(match[1]), text });
    });
    const lines = [`${method} ${target} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close", `Content-Length: ${Buffer.byteLength(body)}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    // No half-close: a server may drop a request whose client has ended its side before the reply.
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    socket.write(body);
  });
}
