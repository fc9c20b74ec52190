#!/usr/bin/env node
// The `envace` command. Each command lives in its own module and is loaded only when used.

interface Command {
  summary: string;
  load: () => Promise<{ run(argv: string[]): Promise<number> }>;
}

const commands: Record<string, Command> = {
  train: { summary: "train a policy (EnvACE, GRPO baselines) and evaluate it", load: () => import("./commands/train.js") },
  demo: { summary: "roll out one task self-unfolded with a scripted policy (offline, seconds)", load: () => import("./commands/demo.js") },
  eval: { summary: "evaluate a policy on a benchmark", load: () => import("./commands/eval.js") },
  report: { summary: "write an HTML report of one or more runs", load: () => import("./commands/report.js") },
};

function usage(): string {
  const width = Math.max(0, ...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`);
  return ["usage: envace <command> [options]", "", "commands:", ...lines].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    console.log(usage());
    return 0;
  }
  const command = commands[name];
  if (command === undefined) {
    console.error(`envace: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const module = await command.load();
  return module.run(rest);
}

process.exitCode = await main(process.argv.slice(2));
