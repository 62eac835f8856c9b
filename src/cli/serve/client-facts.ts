/**
 * Browser code that renders a page of `/api/facts` (plain ES2017, inlined into the page; no template literals, so it
 * can live in this TypeScript string). `renderFacts` touches no global: it builds nodes with `ui.el` (which sets text
 * through `textContent`, so a fact's text, untrusted data, never becomes markup) and reports clicks through
 * `ui.source(sessionId, messageId)` (jump to a source message) and `ui.more(next)` (the next page), so a test can run
 * it against a stand-in DOM. `append` adds the page below the facts shown instead of replacing them.
 *
 * `factsPanel` loads the panel for the open session: the facts learned from it (`/api/facts?id=`) or all of its
 * owner's (`/api/facts?owner=`), of the statuses picked; `showSource` shows a source message in the conversation.
 */
export const FACTS_SCRIPT = `
function renderFacts(box, page, ui, append) {
  if (!append) box.textContent = "";
  if (!page.keepsFacts) {
    box.appendChild(ui.el("p", "muted", "This store keeps no facts."));
    return;
  }
  if (page.facts.length === 0 && page.next === null) {
    box.appendChild(ui.el("p", "muted", append ? "No more facts." : "No " + page.status.join(", ") + " facts."));
  }
  page.facts.forEach(function (fact) {
    var item = ui.el("div", "fact-item " + fact.status);
    item.setAttribute("data-fact-id", fact.id);
    var head = ui.el("div", "muted");
    head.appendChild(ui.el("span", "fact-status", fact.status + (fact.supersededBy ? " by " + fact.supersededBy : "")));
    var line = (fact.about ? " · about " + fact.about : "") + " · observed " + fact.observedAt.slice(0, 19).replace("T", " ") + " · " + fact.producer + " · " + (fact.owner !== null ? "owner " + fact.owner : "session's own");
    head.appendChild(ui.el("span", null, line));
    item.appendChild(head);
    item.appendChild(ui.el("div", "fact-text", fact.text));
    var sources = ui.el("div", "fact-sources muted", "sources: ");
    fact.sources.forEach(function (s) {
      var link = ui.el("button", "source", (s.sessionId === ui.session ? "" : ui.label(s.sessionId) + " / ") + s.messageId);
      link.setAttribute("data-source", s.messageId);
      link.setAttribute("title", "Show message " + s.messageId + " of session " + ui.label(s.sessionId));
      link.addEventListener("click", function () { ui.source(s.sessionId, s.messageId); });
      sources.appendChild(link);
    });
    item.appendChild(sources);
    box.appendChild(item);
  });
  if (page.next === null) return;
  // A visible marker: more facts may follow.
  var more = ui.el("div", "facts-more");
  more.appendChild(ui.el("span", "muted", "More facts may follow. "));
  var button = ui.el("button", "more", "Load more");
  // The marker goes when its page is asked for; the next page brings its own if more follow.
  button.addEventListener("click", function () {
    box.removeChild(more);
    ui.more(page.next);
  });
  more.appendChild(button);
  box.appendChild(more);
}

// The statuses the picker names ("all": every one).
var FACT_STATUSES = { current: ["current"], superseded: ["superseded"], invalidated: ["invalidated"], all: ["current", "superseded", "invalidated"] };

function factsPanel(ui) {
  var panel = { session: null, owner: null, seq: 0 };
  function load(cursor) {
    var seq = ++panel.seq, box = ui.$("facts");
    var params = { status: FACT_STATUSES[ui.$("facts-status").value] || ["current"], cursor: cursor || null };
    if (ui.$("facts-of").value === "owner" && panel.owner) params.owner = panel.owner;
    else params.id = panel.session;
    return ui.api("facts", params).then(function (page) {
      if (seq !== panel.seq) return;
      renderFacts(box, page, { el: ui.el, label: ui.label, session: panel.session, source: ui.source, more: load }, !!cursor);
    }).catch(function (error) {
      if (seq !== panel.seq) return;
      box.textContent = "";
      box.appendChild(ui.el("p", "error", error.message));
    });
  }
  ui.$("facts-of").addEventListener("change", function () { load(null); });
  ui.$("facts-status").addEventListener("change", function () { load(null); });
  return {
    // A session without an owner has only its own facts: the owner's choice is disabled.
    open: function (sessionId, owner) {
      panel.session = sessionId;
      panel.owner = owner || null;
      var whose = ui.$("facts-of").options[1];
      whose.disabled = !panel.owner;
      whose.textContent = panel.owner ? "all of " + panel.owner + "'s facts" : "all of the owner's facts (no owner)";
      if (!panel.owner) ui.$("facts-of").value = "session";
      return load(null);
    },
  };
}

// Marks the message where the conversation shows it (unfolding an overlay's originals); false when it is not shown.
function markMessage(messageId, scroll) {
  var node = Array.prototype.filter.call(document.querySelectorAll("#conversation .msg"), function (n) {
    return n.getAttribute("data-message-id") === messageId;
  })[0];
  if (!node) return false;
  Array.prototype.forEach.call(document.querySelectorAll("#conversation .target"), function (n) { n.classList.remove("target"); });
  for (var up = node.parentNode; up; up = up.parentNode) if (up.tagName === "DETAILS") up.open = true;
  node.classList.add("target");
  if (scroll) node.scrollIntoView({ block: "center" });
  return true;
}

// A fact's source: marked where the conversation shows it, else in the branch ending at it (of its own session,
// opened when it is another). The mark is kept (ui.setMark) so that a redraw of that branch (a live update) keeps it.
function showSource(ui, sessionId, messageId) {
  var now = ui.current();
  if (sessionId === now.session && markMessage(messageId, true)) {
    ui.setMark({ session: sessionId, leaf: now.leaf, id: messageId });
    return;
  }
  ui.setMark({ session: sessionId, leaf: messageId, id: messageId });
  var shown = sessionId === now.session ? ui.showBranch(messageId) : ui.openSession(sessionId, messageId);
  return shown.then(function () { markMessage(messageId, true); });
}
`;
