// One-time move of issue #58: the storage contract's types went to src/contract/, and the token estimate (with the
// media pointer format and the total serialisers it reads) to src/message/. This rewrites every relative import and
// re-export of the old modules, symbol by symbol, to the new ones; it is idempotent, so it can run again after a
// merge brings files that still name the old paths. Usage: node scripts/contract-imports.mjs [repo root]
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const ROOT = resolve(process.argv[2] ?? ".");
const DIRS = ["src", "test", "bench", "examples", "scripts"];

const contract = (file, names) => Object.fromEntries(names.map((name) => [name, `src/contract/${file}`]));

/** Old module (repo path without extension) → symbol → new module; symbols not named stay where they were. */
const SPLIT = {
  "src/types": {
    ...contract("message", ["SessionMessagePart", "SessionMessage", "StoredCompaction", "CompactionDetails"]),
    ...contract("search", [
      "SearchResult",
      "SearchContextTurn",
      "SearchContext",
      "SearchBranch",
      "SearchMatch",
      "SearchOptions",
    ]),
    ...contract("provider", [
      "HistoryRowStat",
      "HistoryReadOptions",
      "RecentHistoryResult",
      "AppendResult",
      "WriteSource",
      "AppendOptions",
      "UpsertOptions",
      "UpsertResult",
      "UpdateResult",
      "ImportMessageOptions",
      "SessionProvider",
    ]),
  },
  "src/store/types": {
    ...contract("search", ["StoreSearchOptions"]),
    ...contract("store", ["SessionStore", "SessionBinding", "isSessionStore"]),
    ...contract("context", [
      "BlockStore",
      "EntryHit",
      "EntryStore",
      "ContextCapableStore",
      "hasContextStorage",
    ]),
    ...contract("attachments", [
      "AttachmentStats",
      "AttachmentStore",
      "AttachmentCapableStore",
      "hasAttachmentStore",
    ]),
    ...contract("registry", [
      "SessionInfo",
      "NewSessionRecord",
      "SessionUsage",
      "SessionListOptions",
      "SessionScanOptions",
      "SessionRegistry",
      "RegistryCapableStore",
      "hasSessionRegistry",
    ]),
    ...contract("transfer", [
      "TransferSession",
      "TransferMessage",
      "TransferAttachment",
      "TransferItem",
      "TransferRow",
      "ImportCounts",
      "SessionImportResult",
      "SessionFootprint",
      "SessionTransfer",
      "TransferCapableStore",
      "hasTransfer",
    ]),
  },
  "src/store/feed/events": contract("feed", ["ChangeEvent"]),
  "src/store/feed/feed": {
    ...contract("feed", [
      "ChangeEvent",
      "ChangeListener",
      "SubscribeOptions",
      "Unsubscribe",
      "FeedCapableStore",
      "hasFeed",
    ]),
    ...Object.fromEntries(
      ["Interest", "LoggedChange", "RemoteChanges", "RemoteWatch", "RunningWatch"].map((name) => [
        name,
        "src/store/feed/remote",
      ]),
    ),
  },
  "src/store/step": contract("step", ["StepWrite", "StepCapableStore", "hasStepWrites"]),
  "src/store/write-policy": contract("store", ["WritePolicy", "WritePolicyOptions"]),
};

/** Whole files that moved: every import of the old path names the new one. */
const MOVED = {
  "src/utils/tokens": "src/message/tokens",
  "src/store/media/media": "src/message/media",
  "src/utils/serialize": "src/message/serialize",
};

function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === "node_modules" || entry.name === "dist" ? [] : sourceFiles(path);
    return /\.(ts|tsx|mts|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** The repo path a relative specifier names, without its extension. */
function target(file, specifier) {
  return relative(ROOT, resolve(dirname(file), specifier))
    .replaceAll("\\", "/")
    .replace(/\.(js|ts|mjs|mts)$/, "");
}

function specifierFor(file, module, extension) {
  const path = relative(dirname(file), join(ROOT, module)).replaceAll("\\", "/");
  return `${path.startsWith(".") ? path : `./${path}`}${extension}`;
}

function name(element) {
  return (element.propertyName ?? element.name).text;
}

/** The declarations that replace `node`, or undefined when it names none of the old modules. */
function rewrite(file, node) {
  const specifier = node.moduleSpecifier;
  if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(".")) return undefined;
  const old = target(file, specifier.text);
  const extension = specifier.text.match(/\.(js|ts|mjs|mts)$/)?.[0] ?? "";
  const kind = ts.isImportDeclaration(node) ? "import" : "export";
  if (MOVED[old]) {
    const text = node.getText();
    const quote = text.slice(
      specifier.getStart() - node.getStart(),
      specifier.getStart() - node.getStart() + 1,
    );
    return text.replace(
      `${quote}${specifier.text}${quote}`,
      `"${specifierFor(file, MOVED[old], extension)}"`,
    );
  }
  const map = SPLIT[old];
  if (!map) return undefined;
  const stays = existsSync(join(ROOT, `${old}.ts`));
  let typeOnly;
  let elements;
  if (kind === "import") {
    const clause = node.importClause;
    const bindings = clause?.namedBindings;
    if (!clause || clause.name || !bindings || !ts.isNamedImports(bindings)) {
      throw new Error(`${relative(ROOT, file)}: only named imports of ${old} can be split`);
    }
    typeOnly = clause.isTypeOnly;
    elements = bindings.elements;
  } else {
    if (!node.exportClause || !ts.isNamedExports(node.exportClause)) {
      throw new Error(`${relative(ROOT, file)}: only named re-exports of ${old} can be split`);
    }
    typeOnly = node.isTypeOnly;
    elements = node.exportClause.elements;
  }
  const groups = new Map();
  for (const element of elements) {
    const module = map[name(element)] ?? (stays ? old : undefined);
    if (!module) throw new Error(`${relative(ROOT, file)}: ${name(element)} of ${old} has no new home`);
    const group = groups.get(module) ?? [];
    group.push(element);
    groups.set(module, group);
  }
  if (groups.size === 1 && groups.has(old)) return undefined;
  return [...groups]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([module, group]) => {
      const allTypes = typeOnly || group.every((element) => element.isTypeOnly);
      const names = group.map((element) =>
        allTypes ? element.getText().replace(/^type\s+/, "") : element.getText(),
      );
      return `${kind}${allTypes ? " type" : ""} { ${names.join(", ")} } from "${specifierFor(file, module, extension)}";`;
    })
    .join("\n");
}

let changed = 0;
for (const file of DIRS.flatMap((dir) => sourceFiles(join(ROOT, dir)))) {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const edits = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const replacement = rewrite(file, statement);
    if (replacement !== undefined) edits.push([statement.getStart(), statement.end, replacement]);
  }
  if (edits.length === 0) continue;
  let out = text;
  for (const [start, end, replacement] of edits.reverse())
    out = out.slice(0, start) + replacement + out.slice(end);
  writeFileSync(file, out);
  changed++;
}
console.log(`rewrote imports in ${changed} files`);
