/**
 * Browser code that renders an open session's summary (plain ES2017, inlined into the page; no template literals, so
 * it can live in this TypeScript string): its heading and its facts of record (id, model, source, owner, times,
 * counts, usage). `renderSummary` touches no global: nodes come from `ui.el` (text through `textContent`), names from
 * `ui.title` and `ui.label`, and the parent session opens through `ui.open`.
 */
export const SUMMARY_SCRIPT = `
function renderSummary(box, data, ui) {
  var s = data.summary, el = ui.el, time = ui.time;
  function fact(parent, label, value) {
    var span = el("span", null);
    span.appendChild(el("span", "muted", label + " "));
    span.appendChild(document.createTextNode(value === null || value === undefined ? "-" : String(value)));
    parent.appendChild(span);
  }

  box.textContent = "";
  var heading = ui.title(s);
  box.appendChild(el("h2", null, heading));
  var facts = el("div", "facts");
  if (heading !== s.id) fact(facts, "id", s.id === "" ? '"" ' + ui.label(s.id) : s.id);
  fact(facts, "model", s.model);
  // Most plain conversations (a Session without a SessionManager) have no registry row: a fact, not a warning.
  fact(facts, "source", s.registered ? s.source : "not registered");
  if (s.owner) fact(facts, "owner", s.owner);
  if (s.pinned) fact(facts, "pinned", "yes (a retention sweep never erases it)");
  // An unregistered session (written without the manager) has no registry times: its messages' are shown.
  var times = data.nodes.map(function (n) { return n.createdAt; }).filter(Boolean).sort();
  fact(facts, "created", s.createdAt ? time(s.createdAt) : times.length ? time(times[0]) + " (first message)" : "unknown");
  fact(facts, "last activity", s.updatedAt ? time(s.updatedAt) : times.length ? time(times[times.length - 1]) + " (last message)" : "unknown");
  fact(facts, "messages", s.messages + " on " + data.leaves.length + (data.leaves.length === 1 ? " branch" : " branches"));
  fact(facts, "overlays", data.compactions.length);
  fact(facts, "stored", s.bytes + " bytes, ~" + s.tokens + " tokens");
  if (s.usage) {
    var u = s.usage;
    fact(facts, "usage", u.inputTokens + " in / " + u.outputTokens + " out, cache " + u.cacheReadTokens + " read / " + u.cacheWriteTokens + " write, $" + u.cost.toFixed(4));
  }
  if (s.endReason) fact(facts, "ended", s.endReason);
  box.appendChild(facts);
  if (s.parentSessionId) {
    var link = el("button", null, "Open parent session " + s.parentSessionId);
    link.addEventListener("click", function () { ui.open(s.parentSessionId, null); });
    box.appendChild(link);
  }
}
`;
