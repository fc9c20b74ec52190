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
      // A string-keyed record that starts as `{}` is filled from keys, and keys often come from data
      // (a model, a file, a server): on `{}` a `__proto__` key sets the prototype instead of being
      // stored, and a missing key reads Object's members. Start from `Object.create(null)` or use a Map,
      // also where the keys are fixed in code today: the next change may fill it from data.
      rules: {
        "no-restricted-syntax": [
          "error",
          ...[
            "VariableDeclarator[init.type='ObjectExpression'][init.properties.length=0] > Identifier.id",
            "PropertyDefinition[value.type='ObjectExpression'][value.properties.length=0]",
          ]
            .flatMap((site) => [
              `${site} TSTypeReference[typeName.name='Record'] > TSTypeParameterInstantiation > TSStringKeyword:first-child`,
              `${site} TSTypeLiteral > TSIndexSignature`,
            ])
            .map((selector) => ({
              selector,
              message:
                "A record filled from string keys: start it from Object.create(null) or use a Map, so a `__proto__` key stays data and a missing key reads nothing.",
            })),
        ],
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
        // A test's records hold the keys it chose.
        "no-restricted-syntax": "off",
      },
    },
  );
}
