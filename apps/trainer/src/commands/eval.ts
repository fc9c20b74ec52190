// `envace eval <benchmark> …`: each benchmark's evaluation lives in its own module.

type Runner = (argv: string[]) => Promise<number>;

const benchmarks: Record<string, { summary: string; load: () => Promise<{ run: Runner }> }> = {
  bfcl: { summary: "BFCL v4: AST checker and multi-turn environments", load: () => import("./eval-bfcl.js") },
  builtin: { summary: "held-out tasks of the built-in shop, with and without private rehearsal", load: () => import("./eval-builtin.js") },
  tau2: { summary: "τ²-bench retail, airline and mock: upstream-exact tools, hashes and scoring", load: () => import("./eval-tau2.js") },
};

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const benchmark = name === undefined ? undefined : benchmarks[name];
  if (benchmark === undefined) {
    const list = Object.entries(benchmarks).map(([key, b]) => `  ${key}  ${b.summary}`);
    console.error([`envace eval: ${name === undefined ? "missing" : `unknown benchmark "${name}"`}`, "", "benchmarks:", ...list].join("\n"));
    return 2;
  }
  return (await benchmark.load()).run(rest);
}
