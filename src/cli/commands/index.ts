import type { Command } from "../command.js";
import { adopt } from "./adopt.js";
import { blocks } from "./blocks.js";
import { demo } from "./demo.js";
import { embed } from "./embed.js";
import { exportCommand } from "./export.js";
import { importCommand } from "./import.js";
import { ls } from "./ls.js";
import { prune } from "./prune.js";
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
  embed,
  serve,
];

/** The command called `name`, if there is one. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((command) => command.name === name);
}
