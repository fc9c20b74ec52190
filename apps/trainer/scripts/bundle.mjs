// Bundles the `envace` command into dist/bin: the workspace packages from their sources, each
// command in its own chunk (loaded when it runs), code a command does not use left out. Packages
// with native code, WebAssembly or worker files stay outside and load from node_modules.
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// dist/bin sits as deep as src/<dir>/, so paths the sources resolve from import.meta.url still hold.
const outdir = join(root, "dist", "bin");
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, "src", "cli.ts")],
  outdir,
  chunkNames: "[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  conditions: ["@envace/source"],
  external: ["onnxruntime-node", "@tensorflow/*", "pino", "pino-pretty", "playwright-core", "echarts"],
  // Bundled CommonJS packages call require; an ES module has none of its own.
  banner: { js: 'import { createRequire as __envaceRequire } from "node:module"; const require = __envaceRequire(import.meta.url);' },
  sourcemap: true,
  logLevel: "warning",
});
