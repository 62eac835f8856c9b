import type { Command } from "../command.js";
import { adopt } from "./adopt.js";
import { blocks } from "./blocks.js";
import { demo } from "./demo.js";
import { embed } from "./embed.js";
import { exportCommand } from "./export.js";
import { facts } from "./facts.js";
import { importCommand } from "./import.js";
import { learn } from "./learn.js";
import { ls } from "./ls.js";
import { mcp } from "./mcp.js";
import { prune } from "./prune.js";
import { purge } from "./purge.js";
import { rekey } from "./rekey.js";
import { search } from "./search.js";
import { serve } from "./serve.js";
import { show } from "./show.js";
import { stats } from "./stats.js";
import { tree } from "./tree.js";

/** Every command, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [
  demo,
  ls,
  show,
  tree,
  search,
  blocks,
  stats,
  exportCommand,
  importCommand,
  adopt,
  prune,
  purge,
  rekey,
  embed,
  learn,
  facts,
  serve,
  mcp,
];

/** The command called `name`, if there is one. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((command) => command.name === name);
}

/** The usage error for a name that is no command, suggesting the closest one when a typo explains it. */
export function unknownCommand(name: string): string {
  let best: { name: string; distance: number } | undefined;
  for (const command of COMMANDS) {
    const distance = editDistance(name.toLowerCase(), command.name);
    if (best === undefined || distance < best.distance) best = { name: command.name, distance };
  }
  const close = best !== undefined && best.distance <= Math.min(2, Math.floor(best.name.length / 2));
  return `unknown command ${JSON.stringify(name)}${close ? ` (did you mean "${best?.name}"?)` : ""}`;
}

/** Levenshtein distance; command names are short, so the quadratic table costs nothing. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
