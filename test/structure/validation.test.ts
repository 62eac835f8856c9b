// Validation one way (docs/ARCHITECTURE.md, "Errors and validation"): an option bag or a record is a zod schema
// parsed through src/schema/parse.ts, which words every refusal the same way (the option's path in `issues`, the
// message ending in `got …`). A hand-written `new SessionError("INVALID_ARGUMENT", …)` stays only where a schema
// does not fit: the per-message hot path (a schema allocates per field, which the append benchmark shows), a check
// that compares the input with stored data or with the store's state (not the input's shape), or a positional
// argument. This is a ratchet: each file that still holds such sites is listed with its count as a ceiling, a file
// not listed may hold none, and a count below its ceiling must be written down, so the number only goes down.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SITE = /new SessionError\(\s*"INVALID_ARGUMENT"/g;

/** Files that may keep hand-written INVALID_ARGUMENT sites, by path under src/, each with its ceiling. */
const CEILINGS: Record<string, number> = {
  // The hot path: run for every message or every append (ids, Unicode, the append's arguments, the JSON of what
  // is stored, a chain's or a step's messages, a transferred record, the keyring's answer on a sealed write).
  "message/ids.ts": 4,
  "message/tool-parts.ts": 1,
  "agent/checks.ts": 3,
  "agent/codec.ts": 2,
  "agent/storage/file.ts": 1,
  "manager/messages.ts": 2,
  "session/chain.ts": 1,
  "store/step.ts": 2,
  "store/keys.ts": 2,
  "store/write-policy.ts": 1,
  "store/crypto/owner-keys.ts": 2,
  "store/transfer/attachments.ts": 3,
  "store/transfer/stream.ts": 2,
  "postgres/transfer/rows.ts": 1,
  "sql/engines/postgres/timestamp.ts": 1,
  "postgres/transfer/import.ts": 1,

  // State, not shape: the input against stored data, the store's or the Session's state, or another argument.
  "session/lifecycle.ts": 3,
  "session/compaction-fit.ts": 1,
  "session/context.ts": 1,
  "context/blocks.ts": 2,
  "context/block-keys.ts": 1,
  "manager/state.ts": 1,
  "manager/templates.ts": 1,
  "manager/owner-view.ts": 1,
  "facts/import.ts": 1,
  "store/fact-sources.ts": 1,
  "facts/learn.ts": 1,
  "facts/store-base.ts": 1,
  "search/limits.ts": 1,
  "search/blind-tokens.ts": 1,
  "search/vectors/channel.ts": 1,
  "sql/vectors/sqlite.ts": 1,
  "postgres/citus/distribute.ts": 1,
  "sql/engines/postgres/layout-check.ts": 1,
  "store/usage-totals.ts": 1,
  "store/crypto/rekey-run.ts": 1,
  "store/crypto/rotation.ts": 1,
  "store/adopt/registry.ts": 1,
  // A delta's base against the value the import carried of its channel just before (the stream's state).
  "store/transfer/checkpoints.ts": 1,
  "agent/storage/store.ts": 1,
  "agent/storage/store-writes.ts": 1,
  "ai-sdk/chat-turn.ts": 1,
  "ai-sdk/learn.ts": 1,
  "ai-sdk/memory.ts": 1,
  "ai-sdk/regenerate.ts": 1,
  "mcp/options.ts": 1,

  // A positional argument or a source told apart by its kind (a path, a handle, a store, a model id, a format).
  "agent/model.ts": 3,
  "agent/storage/factory.ts": 2,
  "agent/storage/redis-client.ts": 1,
  "session/source.ts": 1,
  "sqlite/reference.ts": 1,
  "sql/engines/sqlite/open.ts": 1,
  "context/types.ts": 1,
  "context/providers.ts": 1,
  "context/tool-formats.ts": 1,
  "context/fs-skills.ts": 4,
  "s3/keys.ts": 1,
  "manager/facts.ts": 1,
  "manager/lineage.ts": 1,
  "openai-agents/session.ts": 3,
  "ai-sdk/resumable.ts": 1,
  "store/provider.ts": 1,
  "store/registry-base.ts": 1,
  "store/crypto/keyring.ts": 1,

  // Refusal helpers other checks call (one site each, however many checks use them): an options argument that is
  // no object, a model's tool input, and a fact store's scalar arguments (scope, cursor, store order, time).
  "options-arg.ts": 1,
  "mcp/tool.ts": 1,
  "store/facts.ts": 1,
  "store/fact-import.ts": 1,

  // Option bags and records not yet written as schemas: none are left; one that is found goes here with its count,
  // until it is converted.
};

function sites(): Map<string, number> {
  const found = new Map<string, number>();
  const src = join(ROOT, "src");
  for (const file of sourceFiles(src)) {
    const count = readFileSync(file, "utf8").match(SITE)?.length ?? 0;
    if (count > 0) found.set(relative(src, file).split("\\").join("/"), count);
  }
  return found;
}

test("no file gains a hand-written INVALID_ARGUMENT: option bags and records are schemas", () => {
  const over = [...sites()]
    .filter(([file, count]) => count > (CEILINGS[file] ?? 0))
    .map(([file, count]) => `${file}: ${count} (ceiling ${CEILINGS[file] ?? 0})`);
  assert.deepEqual(
    over,
    [],
    "describe the option bag or record as a zod schema parsed with parseInput (src/schema/parse.ts); a check on " +
      "the per-message hot path, or one that depends on stored state, may be listed here with the reason",
  );
});

test("every ceiling is the file's count: a check turned into a schema lowers its line", () => {
  const found = sites();
  const stale = Object.entries(CEILINGS)
    .filter(([file, ceiling]) => (found.get(file) ?? 0) < ceiling)
    .map(([file, ceiling]) => `${file}: ${found.get(file) ?? 0} (ceiling ${ceiling})`);
  assert.deepEqual(
    stale,
    [],
    "lower these ceilings to the counts (drop a line at 0), so the number only goes down",
  );
});
