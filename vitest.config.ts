import { defineConfig } from "vitest/config";

// One config for the whole repository. Packages run it with `--config ../../vitest.config.ts`,
// so `include` is relative to whichever directory vitest is started in.
const sourceConditions = ["@envace/source", "import", "module", "node", "default"];

export default defineConfig({
  resolve: { conditions: sourceConditions },
  ssr: { resolve: { conditions: sourceConditions, externalConditions: ["@envace/source"] } },
  test: {
    include: ["**/src/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
