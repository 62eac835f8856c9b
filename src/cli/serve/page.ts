import { CLIENT_SCRIPT } from "./client.js";
import { BLOCKS_SCRIPT } from "./client-blocks.js";
import { FACTS_SCRIPT } from "./client-facts.js";
import { GRAPH_SCRIPT } from "./client-graph.js";
import { SEARCH_SCRIPT } from "./client-search.js";
import { SUMMARY_SCRIPT } from "./client-summary.js";

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
:root { --fg: #1d2330; --muted: #667085; --line: #d9dee7; --bg: #f6f7f9; --user: #2563eb; --assistant: #059669;
  --other: #7c3aed; --overlay: #b45309; --sel: #f59e0b; font-family: system-ui, sans-serif; color: var(--fg); }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); font-size: 14px; }
header { display: flex; gap: 12px; align-items: center; padding: 8px 16px; background: #111827; color: #fff; }
header h1 { font-size: 16px; margin: 0; }
header .db { color: #cbd5e1; font-family: ui-monospace, monospace; font-size: 12px; }
header .badge { background: #374151; border-radius: 10px; padding: 2px 8px; font-size: 12px; }
header form { margin-left: auto; display: flex; gap: 6px; }
header input, header select, header button { font: inherit; padding: 4px 8px; border-radius: 4px; border: 0; }
main { display: grid; grid-template-columns: 260px 1fr; height: calc(100vh - 44px); }
#sessions { overflow: auto; border-right: 1px solid var(--line); background: #fff; }
#sessions button { display: block; width: 100%; text-align: left; padding: 8px 12px; border: 0;
  border-bottom: 1px solid var(--line); background: none; cursor: pointer; font: inherit; }
#sessions button:hover, #sessions button.selected { background: #eef2ff; }
#sessions > p { margin: 0; padding: 8px 12px; }
.muted { color: var(--muted); font-size: 12px; }
.tag { font-size: 11px; border: 1px solid var(--line); border-radius: 8px; padding: 0 6px; margin-left: 4px; }
#detail { overflow: auto; padding: 12px 16px; }
#summary h2 { margin: 0 0 4px; font-size: 18px; }
.facts { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 6px 0 12px; }
.layout[hidden] { display: none; }
.layout { display: grid; grid-template-columns: minmax(220px, max-content) minmax(0, 1fr); gap: 16px; align-items: start; }
.graph-panel { position: sticky; top: 0; max-width: 45vw; }
#graph { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px; max-height: calc(100vh - 230px);
  overflow: auto; }
#graph svg { display: block; }
#graph .edge { fill: none; stroke: #98a2b3; stroke-width: 1.5; }
#graph .edge.active { stroke: #475467; stroke-width: 2.5; }
#graph .node circle { stroke-width: 2; cursor: pointer; }
#graph .node.user circle { stroke: var(--user); fill: var(--user); }
#graph .node.assistant circle { stroke: var(--assistant); fill: var(--assistant); }
#graph .node.other circle { stroke: var(--other); fill: var(--other); }
#graph .node.inactive circle { fill: #fff; }
#graph .node.covered circle { stroke-dasharray: 3 2; stroke: var(--overlay); }
#graph .node.selected circle { stroke: var(--sel); stroke-width: 4; }
#graph .node text { font: 11px ui-monospace, monospace; fill: var(--fg); pointer-events: none; }
.msg { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--other); border-radius: 6px;
  padding: 8px 12px; margin-bottom: 8px; }
.msg.user { border-left-color: var(--user); }
.msg.assistant { border-left-color: var(--assistant); }
.msg.overlay { border-left-color: var(--overlay); background: #fffbeb; }
.msg .head { display: flex; flex-wrap: wrap; gap: 0 8px; align-items: baseline; margin-bottom: 4px; overflow-wrap: anywhere; }
.msg .role { font-weight: 600; }
.part { white-space: pre-wrap; overflow-wrap: anywhere; margin: 2px 0; }
.part.tool, .part.reasoning, .part.other { font-family: ui-monospace, monospace; font-size: 12px; color: #344054;
  background: #f2f4f7; border-radius: 4px; padding: 4px 6px; }
details { margin-top: 6px; }
details .msg { margin-left: 12px; }
pre.block { white-space: pre-wrap; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
#results .hit, #results .ctx { display: block; width: 100%; text-align: left; background: #fff; border: 1px solid var(--line);
  border-radius: 6px; padding: 6px 10px; margin-bottom: 6px; cursor: pointer; font: inherit; overflow-wrap: anywhere; }
.hit-group { margin-bottom: 12px; }
#results .hit-group .hit { border-left: 4px solid var(--sel); background: #fffdf5; }
#results .hit-group .ctx { opacity: 0.6; margin-left: 16px; width: calc(100% - 16px); padding: 4px 10px; }
#results .hit-group .ctx:hover { opacity: 1; }
.covered-by { margin: -2px 0 6px 16px; padding: 4px 10px; border-left: 4px dashed var(--overlay); background: #fffbeb;
  font-size: 12px; overflow-wrap: anywhere; }
.covered-by .summary { color: var(--muted); white-space: pre-wrap; }
.covered-by button { font: inherit; margin-top: 4px; cursor: pointer; }
.msg.target { outline: 3px solid var(--sel); }
.error { color: #b42318; }
.fact-item { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--assistant); border-radius: 6px;
  padding: 6px 10px; margin: 6px 0; overflow-wrap: anywhere; }
.fact-item.superseded, .fact-item.invalidated { border-left-color: var(--muted); opacity: 0.75; }
.fact-item .fact-status { font-weight: 600; }
.fact-text { white-space: pre-wrap; margin: 2px 0; }
.fact-sources button { font: inherit; margin: 0 4px 0 0; cursor: pointer; }
.legend { max-width: 240px; margin: 6px 0 0; padding: 0; list-style: none; }
.legend li { display: flex; gap: 6px; align-items: center; }
.legend svg { flex: none; }
/* Narrow windows (a phone, a side panel): one column, the header wraps, nothing wider than the screen. */
@media (max-width: 720px) {
  header { flex-wrap: wrap; padding: 8px; }
  header form { margin-left: 0; width: 100%; flex-wrap: wrap; }
  /* The search box and its button take the first line, the three pickers share the next, shrinking evenly. */
  header input { order: -2; flex: 1 1 60%; min-width: 0; }
  header form button { order: -1; }
  header select { flex: 1 1 30%; min-width: 0; }
  main { display: block; height: auto; }
  #sessions { max-height: 30vh; border-right: 0; border-bottom: 1px solid var(--line); }
  #detail { padding: 8px; }
  .layout { grid-template-columns: minmax(0, 1fr); }
  .graph-panel { position: static; max-width: none; }
  #graph { max-height: 50vh; }
}
`;

/** A legend swatch: a dot in a role's colour, filled or hollow, dashed for an overlay, ringed when selected. */
function dot(colour: string, filled: boolean, dashed = false): string {
  const stroke = colour === "sel" ? "var(--assistant)" : `var(--${colour})`;
  const ring =
    colour === "sel" ? ' stroke="var(--sel)" stroke-width="3"' : ` stroke="${stroke}" stroke-width="2"`;
  const fill = colour === "sel" ? stroke : filled ? stroke : "#fff";
  const dash = dashed ? ' stroke-dasharray="3 2"' : "";
  return `<svg width="16" height="16" aria-hidden="true"><circle cx="8" cy="8" r="5.5" fill="${fill}"${ring}${dash}/></svg>`;
}

/**
 * The viewer's single page: markup, style and script inline (no CDN, no build step). The data is never part of
 * the markup: the script fetches it as JSON and renders every string with `textContent`, so a message holding
 * `<script>` shows as text. `nonce` marks the only script and style the Content-Security-Policy allows.
 */
export function renderPage(nonce: string, title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agent-session viewer</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header>
  <h1>agent-session</h1>
  <span class="db" id="db">${escapeHtml(title)}</span>
  <span class="badge">read-only</span>
  <form id="search">
    <input id="q" type="search" placeholder="Search all sessions" aria-label="Search">
    <select id="branch" aria-label="Branches"><option value="all">all branches</option><option value="active">active paths</option></select>
    <select id="role" aria-label="Role"><option value="">any role</option><option value="user">user</option><option value="assistant">assistant</option><option value="system">system</option><option value="tool">tool</option></select>
    <select id="context" aria-label="Turns around each hit"><option value="0">no context</option><option value="1">±1 turn</option><option value="2">±2 turns</option><option value="3">±3 turns</option><option value="5">±5 turns</option></select>
    <button type="submit">Search</button>
  </form>
</header>
<main>
  <nav id="sessions" aria-label="Sessions"></nav>
  <section id="detail">
    <div id="results"></div>
    <div id="summary"><p class="muted">Pick a session on the left, or search.</p></div>
    <div class="layout" id="layout" hidden>
      <div class="graph-panel">
        <div id="graph" aria-label="Branch tree"></div>
        <ul class="muted legend" id="legend">
          <li>${dot("user", true)} user</li>
          <li>${dot("assistant", true)} assistant</li>
          <li>${dot("other", true)} system, tool or other role</li>
          <li>${dot("assistant", false)} hollow: not on the branch shown</li>
          <li>${dot("overlay", false, true)} dashed: replaced by a compaction overlay</li>
          <li>${dot("sel", true)} ringed: where the branch shown ends</li>
          <li>Large dots end a branch. Click a dot to read the branch ending there.</li>
        </ul>
      </div>
      <div>
        <div id="branch-title" class="muted"></div>
        <div id="conversation"></div>
        <div id="facts-panel">
          <h3>Facts</h3>
          <select id="facts-of" aria-label="Whose facts"><option value="session">learned from this session</option><option value="owner">all of the owner's facts</option></select>
          <select id="facts-status" aria-label="Fact status"><option value="current">current</option><option value="superseded">superseded</option><option value="invalidated">invalidated</option><option value="all">every status</option></select>
          <div id="facts"></div>
        </div>
        <div id="blocks"></div>
      </div>
    </div>
  </section>
</main>
<script nonce="${nonce}">${GRAPH_SCRIPT}
${SEARCH_SCRIPT}
${BLOCKS_SCRIPT}
${FACTS_SCRIPT}
${SUMMARY_SCRIPT}
${CLIENT_SCRIPT}</script>
</body>
</html>
`;
}
