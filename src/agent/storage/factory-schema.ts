/**
 * The options of `createSessionStorage(type, options)`, per storage type. Only the names are checked here (each
 * storage's constructor checks the values): a misspelt name (`{ path }` for SQLite's `database`) used to be dropped,
 * so the storage silently fell back to `:memory:` and kept nothing.
 */
import { z } from "zod";
import { describe } from "../../message/describe.js";
import { parseInput } from "../../schema/parse.js";
import type { FileSessionStorageOptions } from "./file.js";
import type { PostgresSessionStorageOptions } from "./postgres.js";
import type { RedisSessionStorageOptions } from "./redis.js";
import type { SQLiteSessionStorageOptions } from "./sqlite.js";

// `satisfies Record<keyof …>` makes the compiler refuse a list that misses a name a storage's options gained.
const policy = { reservedMetadataKeys: 1, maxMessageBytes: 1 } as const;
const vectors = {
  embedder: 1,
  embedDimensions: 1,
  onEmbedError: 1,
  vectorIndex: 1,
  queryEmbedTimeoutMs: 1,
  embedTimeoutMs: 1,
} as const;
const FILE = { fsync: 1, compactLogBytes: 1 } as const satisfies Record<keyof FileSessionStorageOptions, 1>;
const SQLITE = {
  ...policy,
  ...vectors,
  driver: 1,
  durability: 1,
  busyTimeoutMs: 1,
  pageCacheMiB: 1,
  maxValueBytes: 1,
  queryLimits: 1,
  changeLog: 1,
  keyring: 1,
} as const satisfies Record<keyof SQLiteSessionStorageOptions, 1>;
const POSTGRES = {
  ...policy,
  ...vectors,
  schema: 1,
  tablePrefix: 1,
  prepare: 1,
  queryLimits: 1,
  changeLog: 1,
  distributed: 1,
  keyring: 1,
} as const satisfies Record<keyof PostgresSessionStorageOptions, 1>;
const REDIS = { prefix: 1 } as const satisfies Record<keyof RedisSessionStorageOptions, 1>;

/** Per type: the option naming what to open (a plain string stands for it) and the storage's own option names. */
const KINDS = {
  memory: { main: undefined, names: {} },
  file: { main: "dir", names: FILE },
  sqlite: { main: "database", names: SQLITE },
  postgres: { main: "connection", names: POSTGRES },
  redis: { main: "connection", names: REDIS },
} as const;

/** Types that cannot open without their `main` option (a connection): refused when it is missing. */
const NEEDS_MAIN = new Set<keyof typeof KINDS>(["postgres", "redis"]);

function schemaOf(type: keyof typeof KINDS) {
  const { main, names } = KINDS[type];
  const keys = [...(main ? [main] : []), ...Object.keys(names)];
  const shape = Object.fromEntries(keys.map((key) => [key, z.unknown().optional()]));
  const allowed = keys.length === 0 ? "no options" : `the options ${keys.join(", ")}`;
  const schema = z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `createSessionStorage("${type}") takes ${allowed}; unknown: ${issue.keys.join(", ")}`
        : `createSessionStorage("${type}") needs an options object${main ? ` or a string (the ${main})` : ""}, got ${describe(issue.input)}`,
  });
  if (!main || !NEEDS_MAIN.has(type)) return schema;
  // Checked once the names are: a misspelt connection option says so, not that the connection is missing.
  return schema.check((ctx) => {
    if (ctx.value[main] !== undefined) return;
    ctx.issues.push({
      code: "custom",
      input: ctx.value,
      path: [main],
      message: `createSessionStorage("${type}") needs options.${main}`,
      params: { rule: "required" },
    });
  });
}

// No argument at all is left to the storage where it has a default or says what it needs (SQLite opens
// `:memory:`, the file storage asks for its directory); Postgres and Redis need their connection here.
const schemas = {
  memory: schemaOf("memory").optional(),
  file: schemaOf("file").optional(),
  sqlite: schemaOf("sqlite").optional(),
  postgres: z.preprocess((value) => value ?? {}, schemaOf("postgres")),
  redis: z.preprocess((value) => value ?? {}, schemaOf("redis")),
};

/**
 * The checked options of a storage type as `{ main, rest }`: `main` is what to open (a plain string argument is
 * taken as it: SQLite's path, the file storage's directory, a Postgres or Redis URL), `rest` the storage's options;
 * an unknown option name or an argument of the wrong type is `INVALID_ARGUMENT`.
 */
export function storageFactoryOptions(
  type: keyof typeof KINDS,
  given: unknown,
): { main: unknown; rest: Record<string, unknown> } {
  const { main } = KINDS[type];
  if (typeof given === "string" && main !== undefined) return { main: given, rest: {} };
  // null is "no options", as everywhere in the library (src/options-arg.ts).
  const parsed = (parseInput(schemas[type], given ?? undefined) ?? {}) as Record<string, unknown>;
  if (main === undefined) return { main: undefined, rest: {} };
  // Only the names given are passed on (a zod parse adds none), so the storage sees the caller's object's keys.
  const { [main]: opened, ...rest } = parsed;
  return { main: opened, rest };
}
