/**
 * Browser code that renders the search box's hits (plain ES2017, inlined into the page; no template literals, so it
 * can live in this TypeScript string). `renderHits` touches no global: it builds nodes with `ui.el` (which sets
 * text through `textContent`, so stored text never becomes markup) and reports clicks through `ui.open` and
 * `ui.openSummary`, which lets a test run it against a stand-in DOM.
 *
 * Each hit is a group in conversation order: the turns before it (dimmed), the hit itself (highlighted; a click
 * opens the branch ending there), the summary that replaced it when a compaction covers it, the turns after it.
 */
export const SEARCH_SCRIPT = `
function renderHits(box, hits, ui) {
  function turnNode(hit, turn) {
    var button = ui.el("button", "ctx");
    button.setAttribute("data-context-id", turn.id);
    button.appendChild(ui.el("div", "muted", turn.role + " · " + turn.id));
    button.appendChild(ui.el("div", null, turn.content));
    button.addEventListener("click", function () { ui.open(hit.sessionId, turn.id); });
    return button;
  }

  function coveredNode(hit) {
    var c = hit.compaction;
    var box = ui.el("div", "covered-by");
    box.setAttribute("data-compaction-id", hit.compactedBy);
    var line = "Covered by summary " + hit.compactedBy;
    if (c) line += " · it replaces " + c.fromMessageId + " … " + c.toMessageId + " in the history the model reads";
    box.appendChild(ui.el("div", null, line));
    if (!c) return box;
    box.appendChild(ui.el("div", "summary", c.summary));
    var show = ui.el("button", "show-summary", "Show the summary and the range it replaces");
    show.addEventListener("click", function () { ui.openSummary(hit); });
    box.appendChild(show);
    return box;
  }

  box.textContent = "";
  box.appendChild(ui.el("h3", null, hits.length + (hits.length === 1 ? " match" : " matches")));
  hits.forEach(function (hit) {
    var group = ui.el("div", "hit-group");
    var context = hit.context || { before: [], after: [] };
    context.before.forEach(function (turn) { group.appendChild(turnNode(hit, turn)); });
    var button = ui.el("button", hit.compactedBy ? "hit covered" : "hit");
    button.setAttribute("data-hit-id", hit.id);
    button.appendChild(ui.el("div", "muted", ui.label(hit.sessionId) + " · " + hit.id + " · " + hit.role + " · " + (hit.onActivePath ? "active path" : "other branch")));
    button.appendChild(ui.el("div", null, hit.content));
    button.addEventListener("click", function () { ui.open(hit.sessionId, hit.id); });
    group.appendChild(button);
    if (hit.compactedBy) group.appendChild(coveredNode(hit));
    context.after.forEach(function (turn) { group.appendChild(turnNode(hit, turn)); });
    box.appendChild(group);
  });
}
`;
