import { HIT_GROUPS_SCRIPT } from "./client-hit-groups.js";

/**
 * Browser code that renders the search box's hits (plain ES2017, inlined into the page; no template literals, so it
 * can live in this TypeScript string). `renderHits` touches no global: it builds nodes with `ui.el` (which sets
 * text through `textContent`, so stored text never becomes markup) and reports clicks through `ui.open` and
 * `ui.openSummary`, which lets a test run it against a stand-in DOM.
 *
 * Each group runs in conversation order (see {@link HIT_GROUPS_SCRIPT}): the turns around its hits (dimmed), each hit
 * highlighted (a click opens the branch ending there) and followed by the summary that replaced it when a compaction
 * covers it. A turn is shown once, however many hits it is context of.
 */
export const SEARCH_SCRIPT = `${HIT_GROUPS_SCRIPT}
function renderHits(box, hits, ui) {
  function turnNode(sessionId, turn) {
    var button = ui.el("button", "ctx");
    button.setAttribute("data-context-id", turn.id);
    button.appendChild(ui.el("div", "muted", turn.role + " · " + turn.id));
    button.appendChild(ui.el("div", null, turn.content));
    button.addEventListener("click", function () { ui.open(sessionId, turn.id); });
    return button;
  }

  function hitNode(hit) {
    var button = ui.el("button", hit.compactedBy ? "hit covered" : "hit");
    button.setAttribute("data-hit-id", hit.id);
    button.appendChild(ui.el("div", "muted", ui.label(hit.sessionId) + " · " + hit.id + " · " + hit.role + " · " + (hit.onActivePath ? "active path" : "other branch")));
    button.appendChild(ui.el("div", null, hit.content));
    button.addEventListener("click", function () { ui.open(hit.sessionId, hit.id); });
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
  if (hits.length === 0) box.appendChild(ui.el("p", "muted", "No message matches this search."));
  // A search of the whole store reads no facts (they are kept per owner or session: docs/FACTS.md#recall).
  if (ui.factsLeftOut && ui.factsLeftOut()) {
    box.appendChild(ui.el("p", "muted facts-left-out", "Facts were left out: a search of the whole store does not read learned facts, so no turn is found through one. Open the viewer with ?owner=<owner> to search an owner's sessions with their facts."));
  }
  hitGroups(hits).forEach(function (found) {
    var group = ui.el("div", "hit-group");
    if (found.after !== null) group.appendChild(ui.el("div", "muted fork", "… continues after " + found.after + ", on another branch"));
    found.items.forEach(function (item) {
      if (!item.hit) return group.appendChild(turnNode(found.sessionId, item.turn));
      group.appendChild(hitNode(item.hit));
      if (item.hit.compactedBy) group.appendChild(coveredNode(item.hit));
    });
    box.appendChild(group);
  });
}

// Fills the search form from an address's parameters (a field it lacks gets its default). A value a picker does not
// offer (an edited link's context=4) becomes an option, so the form shows what is searched and the API judges it:
// a bad value is its 400, shown, never a silently different search.
function fillSearchForm(params, defaults, field, el) {
  Object.keys(defaults).forEach(function (key) {
    var input = field(key), value = params.has(key) ? params.get(key) : defaults[key];
    var offered = input.tagName !== "SELECT" || Array.prototype.some.call(input.options, function (o) { return o.value === value; });
    if (!offered) {
      var option = el("option", null, value);
      option.value = value;
      input.appendChild(option);
    }
    input.value = value;
  });
}
`;
