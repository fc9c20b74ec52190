import { createGzip } from "node:zlib";

/** An RLE block of zstd (RFC 8878 §3.1.1.2): `size` copies of `byte`, in 4 bytes. */
function rleBlock(size: number, byte: number, last: boolean): number[] {
  const header = (last ? 1 : 0) | (1 << 1) | (size << 3);
  return [header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, byte];
}

/**
 * A zstd frame of `blocks` RLE blocks of 128 KiB each, declaring a 128 KiB window and no content
 * size: about 4 bytes of body per 128 KiB of output.
 */
export function zstdBomb(blocks: number, byte = 0x20): Uint8Array {
  const out = [0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3];
  for (let i = 0; i < blocks; i++) out.push(...rleBlock(128 * 1024, byte, i === blocks - 1));
  return Uint8Array.from(out);
}

/** A gzip body of `mebibytes` MiB of zeros, built without holding them. */
export async function gzipBomb(mebibytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const chunks: Buffer[] = [];
  gzip.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => gzip.on("end", resolve));
  const zeros = Buffer.alloc(1 << 20);
  for (let i = 0; i < mebibytes; i++) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once("drain", resolve));
  }
  gzip.end();
  await ended;
  return Buffer.concat(chunks);
}
