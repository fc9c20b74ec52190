import { defineConfig } from "vitest/config";

// One config for the whole repository. Packages run it with `--config ../../vitest.config.ts`,
// so `include` is relative to whichever directory vitest is started in.
const sourceConditions = ["@envace/source", "import", "module", "node", "default"];
// Vitest hands the SSR conditions to Node as --conditions, where "import" would make a CommonJS
// require() load a package's ESM build (protobufjs 6 then finds no Long in long@5): Vite's SSR
// defaults plus ours, and Vite adds import/require itself per import.
const ssrConditions = ["@envace/source", "module", "node", "development|production"];

export default defineConfig({
  resolve: { conditions: sourceConditions },
  ssr: { resolve: { conditions: ssrConditions, externalConditions: ["@envace/source"] } },
  test: {
    include: ["**/src/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
