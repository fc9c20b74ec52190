import { EnvaceError } from "@envace/errors";

/**
 * A walk over the frame and block headers of a zstd body (RFC 8878), without decoding it: what a
 * decoder would have to allocate (the largest window) and what the body declares it inflates to,
 * so a body that asks for too much is refused before any output is produced.
 */
export interface ZstdLayout {
  /** The largest window of any frame, in bytes: the history a streaming decoder keeps. */
  maxWindow: number;
  /** The sum of the frames' declared content sizes (0 for a frame that declares none). */
  declaredSize: number;
  /** Output of raw and RLE blocks, which is known exactly without decoding. */
  knownSize: number;
  frames: number;
}

/** A body that is not zstd as RFC 8878 lays it out; the message says where. */
export class ZstdLayoutError extends EnvaceError {
  override readonly code = "zstd-layout";
}

const ZSTD_MAGIC = 0xfd2fb528;

export function zstdLayout(data: Uint8Array): ZstdLayout {
  const layout: ZstdLayout = { maxWindow: 0, declaredSize: 0, knownSize: 0, frames: 0 };
  let at = 0;
  const need = (bytes: number, what: string) => {
    if (at + bytes > data.length) throw new ZstdLayoutError(`truncated ${what} at byte ${at}`);
  };
  const le = (offset: number, bytes: number) => {
    let value = 0;
    for (let i = bytes - 1; i >= 0; i--) value = value * 256 + data[offset + i]!;
    return value;
  };
  if (data.length === 0) throw new ZstdLayoutError("empty body");
  while (at < data.length) {
    need(4, "frame magic");
    const magic = le(at, 4);
    if (magic >>> 4 === 0x184d2a5) {
      need(8, "skippable frame header");
      at += 8 + le(at + 4, 4);
      if (at > data.length) throw new ZstdLayoutError("truncated skippable frame");
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new ZstdLayoutError(`no zstd frame magic at byte ${at}`);
    at += 4;
    need(1, "frame header");
    const descriptor = data[at]!;
    const fcsFlag = descriptor >> 6;
    const singleSegment = (descriptor >> 5) & 1;
    const checksum = (descriptor >> 2) & 1;
    const dictFlag = descriptor & 3;
    if (descriptor & 8) throw new ZstdLayoutError(`reserved bit set in the frame header at byte ${at}`);
    const dictBytes = [0, 1, 2, 4][dictFlag]!;
    const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
    const headerBytes = 1 + (singleSegment ? 0 : 1) + dictBytes + fcsBytes;
    need(headerBytes, "frame header");
    let window = 0;
    if (!singleSegment) {
      const w = data[at + 1]!;
      const base = 2 ** (10 + (w >> 3));
      window = base + (base / 8) * (w & 7);
    }
    if (dictBytes > 0 && le(at + 1 + (singleSegment ? 0 : 1), dictBytes) !== 0) throw new ZstdLayoutError("frames that need a dictionary are not supported");
    let contentSize = 0;
    if (fcsBytes > 0) {
      contentSize = le(at + headerBytes - fcsBytes, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
      if (singleSegment) window = contentSize;
    }
    at += headerBytes;
    layout.frames++;
    layout.maxWindow = Math.max(layout.maxWindow, window);
    layout.declaredSize += contentSize;
    for (let last = 0; !last;) {
      need(3, "block header");
      const header = le(at, 3);
      last = header & 1;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 3) throw new ZstdLayoutError(`reserved block type at byte ${at}`);
      if (type !== 2) layout.knownSize += size;
      at += 3 + (type === 1 ? 1 : size);
      if (at > data.length) throw new ZstdLayoutError("truncated block");
    }
    at += checksum * 4;
    if (at > data.length) throw new ZstdLayoutError("truncated content checksum");
  }
  return layout;
}
