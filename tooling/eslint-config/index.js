// One preset for the whole repository: strict type-checked rules, tuned where they fight zod or tests.
import js from "@eslint/js";
import regexp from "eslint-plugin-regexp";
import tseslint from "typescript-eslint";

export function envaceConfig(rootDir) {
  return tseslint.config(
    { ignores: ["**/dist/**", "**/node_modules/**", "**/.turbo/**", "**/coverage/**", "**/*.js", "**/*.mjs", "**/*.cjs"] },
    js.configs.recommended,
    ...tseslint.configs.strictTypeChecked,
    ...tseslint.configs.stylisticTypeChecked,
    {
      // Patterns meet model output, judge replies, tool results and user files: a nested or
      // overlapping quantifier that backtracks super-linearly lets one input block a run.
      plugins: { regexp },
      rules: {
        "regexp/no-super-linear-backtracking": "error",
        "regexp/no-super-linear-move": "error",
      },
    },
    {
      languageOptions: {
        parserOptions: {
          project: [`${rootDir}/tsconfig.json`],
          tsconfigRootDir: rootDir,
        },
      },
      rules: {
        "@typescript-eslint/consistent-type-imports": "error",
        "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
        "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true, allowBoolean: true }],
        // Zod schemas and their inferred types deliberately share one name.
        "@typescript-eslint/no-redeclare": "off",
        "@typescript-eslint/no-non-null-assertion": "off",
        "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
      },
    },
    {
      files: ["**/*.test.ts", "**/*.bench.ts", "**/test/**/*.ts"],
      rules: {
        "@typescript-eslint/no-floating-promises": "off",
        "@typescript-eslint/unbound-method": "off",
        // A test's patterns read this project's own output, never text from outside.
        "regexp/no-super-linear-backtracking": "off",
        "regexp/no-super-linear-move": "off",
      },
    },
  );
}
