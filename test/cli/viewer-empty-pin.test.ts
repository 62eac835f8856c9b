// The viewer's empty state, its facts note and the pin (issue #92, item 4): the graph, its legend and the facts
// panel wait for a session (hidden until one opens); a store with no sessions says so; a search of the whole store
// on a store that keeps facts says that facts were left out; a pinned session is marked in the list and the summary.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { CLIENT_SCRIPT } from "../../src/cli/serve/client.js";
import { SEARCH_SCRIPT } from "../../src/cli/serve/client-search.js";
import { SUMMARY_SCRIPT } from "../../src/cli/serve/client-summary.js";
import { renderPage } from "../../src/cli/serve/page.js";
import { startViewer, type Viewer } from "../../src/cli/serve/server.js";
import { SessionManager } from "../../src/index.js";
import { MemoryStore } from "../../src/memory/store.js";

const TOOL = { "X-Agent-Session-Viewer": "1" };

/** Just what the scripts use of a DOM element; text is only ever text. */
class FakeNode {
  children: FakeNode[] = [];
  className = "";
  private text = "";
  constructor(readonly tag: string) {}
  get textContent(): string {
    return this.text + this.children.map((c) => c.textContent).join("");
  }
  set textContent(value: string) {
    this.text = value;
    this.children = [];
  }
  appendChild(child: FakeNode): FakeNode {
    this.children.push(child);
    return child;
  }
  setAttribute(): void {}
  addEventListener(): void {}
}
function el(tag: string, className?: string | null, text?: unknown): FakeNode {
  const node = new FakeNode(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

describe("the viewer's empty state and pin", () => {
  test("the graph, its legend and the facts panel are hidden until a session opens", () => {
    const page = renderPage("n", "t");
    assert.match(page, /<div class="layout" id="layout" hidden>[\s\S]*id="legend"[\s\S]*<h3>Facts<\/h3>/);
    assert.match(
      page,
      /\.layout\[hidden\] \{ display: none; \}/,
      "the grid's display does not override hidden",
    );
    assert.match(
      CLIENT_SCRIPT,
      /state\.session = id;\s+\$\("layout"\)\.hidden = false;/,
      "opening a session shows it",
    );
    assert.match(CLIENT_SCRIPT, /This store has no sessions/);
  });

  const renderHits = new Function(`${SEARCH_SCRIPT}; return renderHits;`)() as (
    box: FakeNode,
    hits: unknown[],
    ui: unknown,
  ) => void;
  const ui = (factsLeftOut: boolean) => ({
    el,
    label: String,
    open() {},
    openSummary() {},
    factsLeftOut: () => factsLeftOut,
  });

  test("a search with no hits says so; a store-wide search of a store with facts says facts were left out", () => {
    const box = new FakeNode("div");
    renderHits(box, [], ui(true));
    assert.match(box.textContent, /^0 matchesNo message matches this search\.Facts were left out: /);
    assert.match(box.textContent, /\?owner=<owner>/);
    const owned = new FakeNode("div");
    renderHits(owned, [], ui(false));
    assert.doesNotMatch(
      owned.textContent,
      /Facts were left out/,
      "an owner's search reads the owner's facts",
    );
  });

  test("the summary of a pinned session says it is pinned", () => {
    const renderSummary = new Function("document", `${SUMMARY_SCRIPT}; return renderSummary;`)({
      createTextNode: (text: string) => el("#text", null, text),
    }) as (box: FakeNode, data: unknown, ui: unknown) => void;
    const summary = (pinned: boolean) => ({
      summary: {
        id: "s",
        registered: true,
        name: "s",
        model: null,
        source: null,
        owner: null,
        pinned,
        messages: 0,
        bytes: 0,
        tokens: 0,
      },
      nodes: [],
      leaves: [],
      compactions: [],
    });
    const box = new FakeNode("div");
    const summaryUi = { el, title: (s: { id: string }) => s.id, label: String, time: String, open() {} };
    renderSummary(box, summary(true), summaryUi);
    assert.match(box.textContent, /pinned yes \(a retention sweep never erases it\)/);
    renderSummary(box, summary(false), summaryUi);
    assert.doesNotMatch(box.textContent, /pinned/);
  });

  describe("/api/sessions", () => {
    const store = new MemoryStore();
    const manager = new SessionManager(store);
    let viewer: Viewer;
    before(async () => {
      viewer = await startViewer(store, { port: 0 });
    });
    after(async () => {
      await viewer?.close();
      await store.close();
    });
    const sessions = async () =>
      (await (await fetch(`${viewer.url}api/sessions`, { headers: TOOL })).json()) as {
        sessions: { id: string; pinned: boolean }[];
        keepsFacts: boolean;
      };

    test("says whether the store keeps facts, and which sessions are pinned", async () => {
      assert.deepEqual(await sessions(), { sessions: [], more: false, keepsFacts: true });
      await store.registry.create({ id: "kept", name: "kept" });
      await store.registry.create({ id: "other", name: "other" });
      await manager.pin("kept");
      const rows = (await sessions()).sessions.map((s) => [s.id, s.pinned]).sort();
      assert.deepEqual(rows, [
        ["kept", true],
        ["other", false],
      ]);
    });
  });
});
