import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Decompress } from "fzstd";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gzipBomb, zstdBomb } from "../testing/bombs.js";

const LIMIT = 1024 * 1024;
/** Peak memory the server may add while refusing a bomb: the 1 MiB of output it keeps, a 128 KiB window, and the runtime's own churn. */
const BOUND = 32 * 1024 * 1024;
const MiB = 1024 * 1024;

interface Memory {
  peakRss: number;
  rss: number;
  arrayBuffers: number;
}

let child: ChildProcess;
let url: string;

function memory(): Promise<Memory> {
  const reply = once(child, "message") as Promise<[Memory]>;
  child.send("stats");
  return reply.then(([m]) => m);
}

function post(body: Uint8Array, encoding: string): Promise<{ status: number; detail: string; ms: number }> {
  const started = performance.now();
  return fetch(`${url}/api/v1/create_session`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Content-Encoding": encoding },
    body: new Uint8Array(body),
  }).then(async (r) => ({
    status: r.status,
    detail: ((await r.json()) as { detail: string }).detail,
    ms: performance.now() - started,
  }));
}

/** What the server answered a body, and how much its peak RSS and array buffers grew meanwhile. */
async function postMeasured(body: Uint8Array, encoding: string): Promise<{ answer: Awaited<ReturnType<typeof post>>; grew: Omit<Memory, "rss"> }> {
  const before = await memory();
  const answer = await post(body, encoding);
  const after = await memory();
  return { answer, grew: { peakRss: after.peakRss - before.peakRss, arrayBuffers: after.arrayBuffers - before.arrayBuffers } };
}

beforeAll(async () => {
  // Alone in its process, the server's peak RSS is what requests cost it.
  child = fork(fileURLToPath(new URL("../testing/bomb-target.ts", import.meta.url)), [String(LIMIT)], {
    execArgv: ["--conditions=@envace/source", "--import", "tsx", "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  url = ((await once(child, "message")) as [{ url: string }])[0].url;
  // Warm up every decoder on small bodies, so the measurement is of the bombs alone.
  expect((await post(zstdBomb(2, 0x78), "zstd")).status).toBe(400);
  expect((await post(await gzipBomb(1), "gzip")).status).toBe(400);
}, 30_000);

afterAll(() => {
  child.kill();
});

describe("compression bombs", () => {
  it("refuses a 9 KiB zstd body that inflates to 300 MiB after at most the limit of output", async () => {
    const bomb = zstdBomb(2400);
    expect(bomb.length).toBe(6 + 2400 * 4);
    // The bomb is real: streamed through a decoder here, it inflates to 2400 × 128 KiB.
    let inflated = 0;
    new Decompress((chunk) => (inflated += chunk.length)).push(bomb, true);
    expect(inflated).toBe(300 * MiB);

    const { answer, grew } = await postMeasured(bomb, "zstd");
    expect(answer).toMatchObject({ status: 413, detail: `create_session: body is larger than ${LIMIT} bytes once decompressed` });
    expect(answer.ms).toBeLessThan(2_000);
    expect(grew.peakRss).toBeLessThan(BOUND);
    expect(grew.arrayBuffers).toBeLessThan(BOUND);
  });

  it("refuses a gzip body that inflates to 128 MiB after at most the limit of output", async () => {
    const bomb = await gzipBomb(128);
    expect(bomb.length).toBeLessThan(200 * 1024);
    const { answer, grew } = await postMeasured(bomb, "gzip");
    expect(answer).toMatchObject({ status: 413, detail: `create_session: body is larger than ${LIMIT} bytes once decompressed` });
    expect(answer.ms).toBeLessThan(2_000);
    expect(grew.peakRss).toBeLessThan(BOUND);
  });

  it("refuses a zstd frame that declares a window or content size beyond the limits before decoding", async () => {
    // Window descriptor exponent 21: a 2 GiB window (2^31), declared by 10 bytes.
    const huge = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3, 0x01, 0x00, 0x00]);
    expect(await post(huge, "zstd")).toMatchObject({
      status: 413,
      detail: `create_session: zstd window of ${2 ** 31} bytes is over the ${8 * MiB} accepted; compress with a smaller window`,
    });
    // Single segment, 4-byte content size 2^30: refused on the declaration alone.
    const declared = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0x00, 0x00, 0x00, 0x40, 0x01, 0x00, 0x00]);
    expect(await post(declared, "zstd")).toMatchObject({ status: 413, detail: `create_session: body is larger than ${LIMIT} bytes once decompressed` });
  });
});
