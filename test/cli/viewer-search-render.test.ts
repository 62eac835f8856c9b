// The viewer's rendering of search hits, run against a small stand-in DOM (no browser): the turns around a hit in
// conversation order, dimmed, the hit highlighted, and the summary that replaced a covered hit with a way to open it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CLIENT_SCRIPT } from "../../src/cli/serve/client.js";
import { GRAPH_SCRIPT } from "../../src/cli/serve/client-graph.js";
import { SEARCH_SCRIPT } from "../../src/cli/serve/client-search.js";

/** Just what renderHits uses of a DOM element; text is only ever text. */
class FakeNode {
  className = "";
  children: FakeNode[] = [];
  attributes = new Map<string, string>();
  listeners = new Map<string, (() => void)[]>();
  #text = "";
  constructor(readonly tag: string) {}
  get textContent(): string {
    return this.#text + this.children.map((c) => c.textContent).join("");
  }
  set textContent(value: string) {
    this.#text = String(value);
    this.children = [];
  }
  appendChild(child: FakeNode): FakeNode {
    this.children.push(child);
    return child;
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, String(value));
  }
  addEventListener(type: string, listener: () => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  click(): void {
    for (const listener of this.listeners.get("click") ?? []) listener();
  }
}

// The page's own el(): className and text through textContent.
function el(tag: string, className?: string | null, text?: unknown): FakeNode {
  const node = new FakeNode(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

type RenderHits = (box: FakeNode, hits: unknown[], ui: unknown) => void;
const renderHits = new Function(`${SEARCH_SCRIPT}; return renderHits;`)() as RenderHits;

function render(hits: unknown[]) {
  const opened: [string, string][] = [];
  const summaries: unknown[] = [];
  const ui = {
    el,
    label: (id: string) => (id === "" ? "(default)" : id),
    open: (session: string, leaf: string) => opened.push([session, leaf]),
    openSummary: (hit: unknown) => summaries.push(hit),
  };
  const box = new FakeNode("div");
  box.textContent = "old results";
  renderHits(box, hits, ui);
  return { box, opened, summaries };
}

const turn = (id: string, role: string, content: string) => ({
  id,
  role,
  content,
  createdAt: "2025-01-01T00:00:00.000Z",
});

const COVERED = {
  id: "u2",
  role: "user",
  content: "Staging took 40 minutes. <script>alert(1)</script>",
  sessionId: "s1",
  onActivePath: true,
  score: 3,
  compactedBy: "c-1",
  compaction: { id: "c-1", fromMessageId: "u1", toMessageId: "a2", summary: "The payments deployment…" },
  context: {
    before: [turn("u1", "user", "first"), turn("a1", "assistant", "second")],
    after: [turn("a2", "assistant", "fourth")],
  },
};

describe("viewer search hits", () => {
  test("the page script (graph, hits, client) parses as one script", () => {
    assert.doesNotThrow(() => new Function(`${GRAPH_SCRIPT}\n${SEARCH_SCRIPT}\n${CLIENT_SCRIPT}`));
    assert.doesNotMatch(SEARCH_SCRIPT, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  test("context turns come in conversation order around the highlighted hit, each opening its branch", () => {
    const { box, opened } = render([COVERED]);
    assert.equal(box.children[0]?.textContent, "1 match");
    const group = box.children[1]!;
    assert.equal(group.className, "hit-group");
    const kinds = group.children.map((c) => c.className);
    assert.deepEqual(kinds, ["ctx", "ctx", "hit covered", "covered-by", "ctx"]);
    const ids = group.children.map(
      (c) => c.attributes.get("data-context-id") ?? c.attributes.get("data-hit-id"),
    );
    assert.deepEqual(ids, ["u1", "a1", "u2", undefined, "a2"]);
    assert.equal(group.children[1]?.textContent, "assistant · a1second");
    assert.match(group.children[2]?.textContent ?? "", /^s1 · u2 · user · active path/);
    // Stored markup stays text: it is the node's text, not a child element.
    assert.equal(group.children[2]?.children[1]?.textContent, COVERED.content);
    assert.equal(group.children[2]?.children[1]?.children.length, 0);
    group.children[0]!.click();
    group.children[2]!.click();
    assert.deepEqual(opened, [
      ["s1", "u1"],
      ["s1", "u2"],
    ]);
  });

  test("a covered hit says which summary replaced it and what range, and opens the summary", () => {
    const { box, summaries } = render([COVERED]);
    const marker = box.children[1]!.children[3]!;
    assert.equal(marker.attributes.get("data-compaction-id"), "c-1");
    assert.match(
      marker.textContent,
      /^Covered by summary c-1 · it replaces u1 … a2 in the history the model reads/,
    );
    assert.match(marker.textContent, /The payments deployment…/);
    const show = marker.children.find((c) => c.tag === "button")!;
    show.click();
    assert.deepEqual(summaries, [COVERED]);
  });

  test("without context or a compaction a hit is the button alone; an unknown overlay still shows its id", () => {
    const plain = { ...COVERED, id: "x", compactedBy: undefined, compaction: undefined, context: undefined };
    const orphan = { ...plain, id: "y", sessionId: "", onActivePath: false, compactedBy: "gone" };
    const { box } = render([plain, orphan]);
    assert.equal(box.children[0]?.textContent, "2 matches");
    assert.deepEqual(
      box.children[1]!.children.map((c) => c.className),
      ["hit"],
    );
    const [hit, marker] = box.children[2]!.children;
    assert.match(hit?.textContent ?? "", /^\(default\) · y · user · other branch/);
    assert.equal(marker?.textContent, "Covered by summary gone");
    assert.equal(
      marker?.children.some((c) => c.tag === "button"),
      false,
    );
    assert.equal(render([]).box.textContent, "0 matches");
  });
});
