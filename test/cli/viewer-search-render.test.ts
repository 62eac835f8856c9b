// The viewer's rendering of search hits, run against a small stand-in DOM (no browser): the turns around a hit in
// conversation order, dimmed, the hit highlighted, and the summary that replaced a covered hit with a way to open it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CLIENT_SCRIPT } from "../../src/cli/serve/client.js";
import { BLOCKS_SCRIPT } from "../../src/cli/serve/client-blocks.js";
import { FACTS_SCRIPT } from "../../src/cli/serve/client-facts.js";
import { GRAPH_SCRIPT } from "../../src/cli/serve/client-graph.js";
import { SEARCH_SCRIPT } from "../../src/cli/serve/client-search.js";
import { SUMMARY_SCRIPT } from "../../src/cli/serve/client-summary.js";

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
  test("the page script (graph, hits, blocks, facts, summary, client) parses as one script", () => {
    assert.doesNotThrow(
      () =>
        new Function(
          `${GRAPH_SCRIPT}\n${SEARCH_SCRIPT}\n${BLOCKS_SCRIPT}\n${FACTS_SCRIPT}\n${SUMMARY_SCRIPT}\n${CLIENT_SCRIPT}`,
        ),
    );
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
    assert.equal(render([]).box.textContent, "0 matchesNo message matches this search.");
  });

  test("a hit that is another hit's context is highlighted in place, and every turn is shown once", () => {
    // m1 … m9 along one branch; hits m3 (best), m9 and m5 with up to 2 turns each side. m9's window (m7 … m9)
    // shares nothing with m3's until m5's (m3 … m7) joins both.
    const line = (n: number) => turn(`m${n}`, n % 2 ? "user" : "assistant", `turn ${n}`);
    const hit = (n: number, before: number[], after: number[]) => ({
      ...line(n),
      sessionId: "s1",
      onActivePath: true,
      score: 1,
      context: { before: before.map(line), after: after.map(line) },
    });
    const { box, opened } = render([hit(3, [1, 2], [4, 5]), hit(9, [7, 8], []), hit(5, [3, 4], [6, 7])]);
    assert.equal(box.children[0]?.textContent, "3 matches");
    const shown = box.children.slice(1).map((group) =>
      group.children.map((c) => {
        const id = c.attributes.get("data-hit-id");
        return id ? `HIT ${id}` : c.attributes.get("data-context-id");
      }),
    );
    assert.deepEqual(shown, [["m1", "m2", "HIT m3", "m4", "HIT m5", "m6", "m7", "m8", "HIT m9"]]);
    box.children[1]!.children[5]!.click();
    assert.deepEqual(opened, [["s1", "m6"]]);
  });

  test("windows that fork after a shared turn: the fork is its own group naming where it continues from", () => {
    // r → a → b1 (hit 1) and r → a → c1 (hit 2): both windows hold r and a, then part.
    const hitAt = (id: string, before: string[], after: string[]) => ({
      ...turn(id, "user", id),
      sessionId: "s1",
      onActivePath: id === "b1",
      score: 1,
      context: {
        before: before.map((t) => turn(t, "user", t)),
        after: after.map((t) => turn(t, "user", t)),
      },
    });
    const other = { ...hitAt("a", [], ["b1"]), sessionId: "s2" };
    const { box } = render([hitAt("b1", ["r", "a"], ["b2"]), other, hitAt("c1", ["r", "a"], ["c2"])]);
    const shown = box.children
      .slice(1)
      .map((group) =>
        group.children.map(
          (c) => c.attributes.get("data-hit-id") ?? c.attributes.get("data-context-id") ?? c.textContent,
        ),
      );
    assert.deepEqual(shown, [
      ["r", "a", "b1", "b2"],
      ["a", "b1"],
      ["… continues after a, on another branch", "c1", "c2"],
    ]);
  });
});
