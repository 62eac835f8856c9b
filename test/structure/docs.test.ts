// The shipped docs (package.json "files": README.md and docs/) are read on npm and in node_modules, where only the
// package exists: a relative link must land on a shipped file (and heading), never on the repository around it.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SHIPPED: string[] = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).files;

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

/** The shipped Markdown files: README.md and every .md under a shipped folder that exists in the checkout. */
function shippedDocs(): string[] {
  return SHIPPED.flatMap((entry) => {
    const path = join(ROOT, entry);
    if (!existsSync(path)) return [];
    if (entry.endsWith(".md")) return [path];
    return readdirSync(path).length > 0 && !entry.startsWith("dist") ? markdownFiles(path) : [];
  });
}

function isShipped(path: string): boolean {
  const rel = relative(ROOT, path);
  if (rel.startsWith("..") || rel === "") return false;
  return SHIPPED.some((entry) => rel === entry || rel.startsWith(entry + sep));
}

/** Fenced blocks and inline code are examples, not links. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

function links(text: string): string[] {
  const body = prose(text);
  const inline = [...body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
  // A definition is a whole line: `[label]: target "title"`; `[1M]: the run…` is prose.
  const defined = [
    ...body.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?(?:\s+("[^"]*"|'[^']*'|\([^)]*\)))?\s*$/gm),
  ].map((m) => m[1]!);
  return [...inline, ...defined];
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

const docs = shippedDocs();

test("the shipped docs are found (README.md and docs/*.md)", () => {
  assert.ok(docs.includes(join(ROOT, "README.md")));
  assert.ok(docs.includes(join(ROOT, "docs", "ARCHITECTURE.md")));
});

test("no shipped doc names ../shared, which is not in the package", () => {
  const bad = docs.flatMap((doc) =>
    readFileSync(doc, "utf8")
      .split("\n")
      .flatMap((line, i) => (line.includes("../shared") ? [`${relative(ROOT, doc)}:${i + 1}: ${line}`] : [])),
  );
  assert.deepEqual(bad, []);
});

test("every relative link of a shipped doc lands on a shipped file and an existing heading", () => {
  const problems: string[] = [];
  for (const doc of docs) {
    const text = readFileSync(doc, "utf8");
    for (const link of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:: not a file of the package
      const [pathPart = "", anchor] = link.split("#", 2);
      const target = pathPart === "" ? doc : resolve(dirname(doc), decodeURIComponent(pathPart));
      const where = `${relative(ROOT, doc)} → ${link}`;
      if (!isShipped(target)) problems.push(`${where}: outside the package`);
      else if (!existsSync(target)) problems.push(`${where}: no such file`);
      else if (anchor !== undefined && target.endsWith(".md")) {
        if (!anchors(readFileSync(target, "utf8")).has(anchor)) problems.push(`${where}: no such heading`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

// A map, not a manual: details belong in the doc of their topic (STORAGE.md, SQLITE.md, RECALL.md, PRIVACY.md, …).
test("docs/ARCHITECTURE.md stays a map: at most 600 lines", () => {
  const lines = readFileSync(join(ROOT, "docs", "ARCHITECTURE.md"), "utf8").split("\n").length;
  assert.ok(lines <= 600, `docs/ARCHITECTURE.md has ${lines} lines; move details to the doc they belong to`);
});
