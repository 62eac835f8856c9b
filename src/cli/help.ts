import { GLOBAL_OPTIONS, type OptionSpec } from "./args.js";
import type { Command } from "./command.js";
import { COMMANDS } from "./commands/index.js";

function wrap(text: string, width = 100, indent = ""): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.length > 0 && line.length + word.length + 1 > width - indent.length) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines;
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const entries = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : "    "}--${name}${o.value ? ` ${o.value}` : ""}`;
    return [flag, o.description] as const;
  });
  const width = Math.max(...entries.map(([flag]) => flag.length));
  return entries.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`);
}

/** The help of the program: usage, every command with its summary, the global options. */
export function programHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "agent-session: inspect, move and serve agent-session memory (SQLite file or Postgres).",
    "",
    "Usage: agent-session <command> [arguments] [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Options for every command:",
    ...optionLines({ ...GLOBAL_OPTIONS, version: { type: "boolean", description: "print the version" } }),
    "",
    "Run 'agent-session <command> --help' for a command's arguments. Exit codes: 0 ok, 1 failure, 2 bad arguments.",
    "",
  ].join("\n");
}

/** The help of one command. */
export function commandHelp(command: Command): string {
  const args = command.positionals.join(" ");
  return [
    `Usage: agent-session ${command.name}${args ? ` ${args}` : ""} [options]`,
    "",
    ...wrap(command.description),
    "",
    ...(Object.keys(command.options).length > 0 ? ["Options:", ...optionLines(command.options), ""] : []),
    "Options for every command:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "Examples:",
    ...command.examples.map((e) => `  ${e}`),
    "",
  ].join("\n");
}
