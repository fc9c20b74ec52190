/**
 * A Tinker server alone in its process, for measuring what a request costs it in memory: prints
 * its URL, then answers each IPC message with its peak and current memory.
 */
import { startTinkerServer } from "../server/server.js";
import { TableBackend } from "./table-backend.js";

const maxBodyBytes = Number(process.argv[2]);
const server = await startTinkerServer({ backend: new TableBackend(4, 0), maxBodyBytes });
process.on("message", () => {
  globalThis.gc?.();
  const { rss, arrayBuffers } = process.memoryUsage();
  // maxRSS is in KiB: the peak since the process started.
  process.send!({ peakRss: process.resourceUsage().maxRSS * 1024, rss, arrayBuffers });
});
process.on("disconnect", () => void server.close());
process.send!({ url: server.url });
