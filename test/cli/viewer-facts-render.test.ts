// The viewer's facts panel rendered against a small stand-in DOM (no browser): each fact with its status, about,
// observed time, producer and sources as buttons that jump to the message; a fact's text is text, never markup; a
// page with more after it ends with a visible "Load more" marker.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FACTS_SCRIPT } from "../../src/cli/serve/client-facts.js";
import { renderPage } from "../../src/cli/serve/page.js";

/** Just what renderFacts uses of a DOM element; text is only ever text. */
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
  removeChild(child: FakeNode): FakeNode {
    this.children = this.children.filter((c) => c !== child);
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
  all(predicate: (node: FakeNode) => boolean): FakeNode[] {
    return [...(predicate(this) ? [this] : []), ...this.children.flatMap((c) => c.all(predicate))];
  }
}

function el(tag: string, className?: string | null, text?: unknown): FakeNode {
  const node = new FakeNode(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

type RenderFacts = (box: FakeNode, page: unknown, ui: unknown, append?: boolean) => void;
const renderFacts = new Function(`${FACTS_SCRIPT}; return renderFacts;`)() as RenderFacts;

const fact = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  text: `Fact ${id}.`,
  about: "Alice",
  observedAt: "2023-11-14T22:13:20.000Z",
  createdAt: "2023-11-14T22:13:21.000Z",
  producer: "model:openai/gpt-4.1-mini",
  sources: [{ sessionId: "a1", messageId: "u1" }],
  owner: "alice",
  sessionId: null,
  status: "current",
  supersededBy: null,
  ...over,
});
const page = (facts: unknown[], next: string | null = null) => ({
  of: { sessionId: "a1", owner: "alice" },
  keepsFacts: true,
  status: ["current"],
  facts,
  next,
});

function render(answer: unknown, box = new FakeNode("div"), append = false) {
  const jumps: [string, string][] = [];
  const pages: string[] = [];
  const ui = {
    el,
    label: (id: string) => (id === "" ? "(default)" : id),
    session: "a1",
    source: (sessionId: string, messageId: string) => jumps.push([sessionId, messageId]),
    more: (next: string) => pages.push(next),
  };
  renderFacts(box, answer, ui, append);
  return { box, jumps, pages };
}

describe("viewer facts panel rendering", () => {
  test("each fact with its status, about, observed time, producer and its sources as jumps", () => {
    const { box, jumps } = render(
      page([
        fact("f1", {
          sources: [
            { sessionId: "a1", messageId: "u1" },
            { sessionId: "a2", messageId: "u7" },
          ],
        }),
        fact("f0", { status: "superseded", supersededBy: "f1", about: null, owner: null, sessionId: "a1" }),
      ]),
    );
    const items = box.all((n) => n.className.startsWith("fact-item"));
    assert.deepEqual(
      items.map((n) => [n.attributes.get("data-fact-id"), n.className]),
      [
        ["f1", "fact-item current"],
        ["f0", "fact-item superseded"],
      ],
    );
    const [first, second] = items.map((n) => n.textContent);
    assert.match(
      first ?? "",
      /^current · about Alice · observed 2023-11-14 22:13:20 · model:openai\/gpt-4\.1-mini · owner alice/,
    );
    assert.match(first ?? "", /Fact f1\.sources: u1a2 \/ u7$/);
    assert.match(second ?? "", /^superseded by f1 · observed .* · session's own/);
    const sources = items[0]!.all((n) => n.className === "source");
    for (const source of sources) source.click();
    assert.deepEqual(jumps, [
      ["a1", "u1"],
      ["a2", "u7"],
    ]);
  });

  test("a fact's text is text: <script> is shown, never markup", () => {
    const text = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    const { box } = render(page([fact("evil", { text, about: "<b>bold</b>" })]));
    const shown = box.all((n) => n.className === "fact-text");
    assert.equal(shown.length, 1);
    assert.equal(shown[0]!.textContent, text);
    assert.equal(box.all((n) => n.tag === "script" || n.tag === "img" || n.tag === "b").length, 0);
    // The script builds nodes with el() (textContent) only: no markup is ever parsed from data.
    assert.doesNotMatch(FACTS_SCRIPT, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  test("more facts after the page: a visible marker whose button asks for the next page and goes", () => {
    const { box, pages } = render(page([fact("f1")], "o:42"));
    const marker = box.all((n) => n.className === "facts-more");
    assert.equal(marker.length, 1);
    assert.match(marker[0]!.textContent, /More facts may follow\. Load more/);
    box.all((n) => n.className === "more")[0]!.click();
    assert.deepEqual(pages, ["o:42"]);
    assert.equal(box.all((n) => n.className === "facts-more").length, 0);
    render(page([fact("f2")]), box, true);
    assert.deepEqual(
      box.all((n) => n.className.startsWith("fact-item")).map((n) => n.attributes.get("data-fact-id")),
      ["f1", "f2"],
      "the next page is appended",
    );
  });

  test("no facts, and a store that keeps none, say so", () => {
    assert.equal(render(page([])).box.textContent, "No current facts.");
    assert.equal(render({ ...page([]), keepsFacts: false }).box.textContent, "This store keeps no facts.");
  });

  test("the page holds the panel and its pickers", () => {
    const html = renderPage("n", "db");
    assert.match(html, /<div id="facts"><\/div>/);
    assert.match(html, /id="facts-status"[^>]*>.*value="all">every status/);
    assert.match(html, /function factsPanel\(ui\)/);
  });
});
