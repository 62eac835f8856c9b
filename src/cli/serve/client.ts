import { COMPACTION_PREFIX } from "../../message/overlay.js";
import { DEFAULT_SESSION_LABEL } from "../inspect/sessions.js";

/**
 * The viewer's browser code (plain ES2017, inlined into the page). Every string from the store reaches the page
 * through `textContent` or an attribute, never as markup, so stored text can never become HTML or script.
 * The address hash (`#session=…&leaf=…&q=…&branch=…&role=…&context=…`) keeps the open branch and the search shown,
 * so a view can be reloaded or shared locally.
 */
export const CLIENT_SCRIPT = `
(function () {
  "use strict";
  // seq numbers requests: an answer that arrives after a newer click is dropped instead of overwriting it.
  // search: the parameters of the results shown (null: none), kept in the address with the open branch.
  // mark: a fact's source marked in the branch shown ({ session, leaf, id }), marked again when that branch is redrawn.
  var state = { session: null, leaf: null, tree: null, view: null, seq: 0, search: null, searchSeq: 0, mark: null, keepsFacts: false };
  var $ = function (id) { return document.getElementById(id); };
  // The page's own ?owner= goes with every request: the list, the search, each session's routes (another's: 404).
  var owner = new URLSearchParams(location.search).get("owner");
  // ?live=0 opens no event stream: headless Chromium's --virtual-time-budget waits for open connections, so a
  // screenshot for documentation or CI never ends while one is open.
  var liveOff = new URLSearchParams(location.search).get("live") === "0";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function api(path, params) {
    var url = new URL("/api/" + path, location.origin);
    Object.keys(params || {}).forEach(function (key) {
      var value = params[key];
      // An array is a repeated parameter (/api/facts's status).
      if (Array.isArray(value)) value.forEach(function (v) { url.searchParams.append(key, v); });
      else if (value !== undefined && value !== null) url.searchParams.set(key, value);
    });
    if (owner) url.searchParams.set("owner", owner);
    // The viewer refuses API requests without this header (or a same-origin Sec-Fetch-Site): see origin.ts.
    return fetch(url, { headers: { "X-Agent-Session-Viewer": "1" } }).then(function (res) {
      return res.json().then(function (body) {
        if (!res.ok) throw new Error(body && body.error ? body.error.message : res.statusText);
        return body;
      });
    });
  }

  // The session of a Session created without forSession has the empty id.
  function sessionLabel(id) { return id === "" ? ${JSON.stringify(DEFAULT_SESSION_LABEL)} : id; }
  // A session's heading: its registered name, else its id. An agent session without a title is registered under
  // its id as its name, and a heading equal to the id is not followed by the id again.
  function sessionTitle(s) { return s.registered && s.name ? s.name : s.nameSealed ? sessionLabel(s.id) + " (sealed name)" : sessionLabel(s.id); }
  function count(n, noun) { return n === null || n === undefined ? "? " + noun + "s" : n + " " + noun + (n === 1 ? "" : "s"); }
  function time(iso) { return iso ? iso.slice(0, 19).replace("T", " ") : ""; }
  function json(value) { return value === undefined ? "" : JSON.stringify(value, null, 2); }
  function showError(target, error) { target.textContent = ""; target.appendChild(el("p", "error", error.message)); }

  function partNode(part) {
    if (!part || typeof part !== "object") return el("div", "part other", json(part));
    // The AI SDK marks where each model step starts; every assistant message of a useChat chat has one.
    if (part.type === "step-start") return null;
    if (part.type === "text") return el("div", "part text", part.text || "");
    if (part.type === "reasoning") return el("div", "part reasoning", "reasoning: " + (part.text || part.reasoning || ""));
    var tool = part.toolName || (typeof part.type === "string" && part.type.indexOf("tool-") === 0 ? part.type.slice(5) : null);
    if (tool || part.type === "dynamic-tool") {
      var lines = "tool " + (tool || "?") + (part.state ? " (" + part.state + ")" : "");
      if (part.input !== undefined || part.args !== undefined) lines += "\\ninput: " + json(part.input !== undefined ? part.input : part.args);
      var output = part.output !== undefined ? part.output : part.result !== undefined ? part.result : part.errorText;
      if (output !== undefined) lines += "\\noutput: " + json(output);
      return el("div", "part tool", lines);
    }
    return el("div", "part other", "[" + part.type + "] " + json(part));
  }

  function messageNode(entry) {
    var box = el("article", "msg " + (entry.overlay ? "overlay" : entry.role === "user" || entry.role === "assistant" ? entry.role : "other"));
    box.setAttribute("data-message-id", entry.id);
    var head = el("div", "head");
    head.appendChild(el("span", "role", entry.overlay ? "compaction overlay" : entry.role));
    head.appendChild(el("span", "muted", entry.id));
    head.appendChild(el("span", "muted", time(entry.createdAt)));
    box.appendChild(head);
    if (entry.overlay) {
      var o = entry.overlay;
      var count = o.covered ? o.covered.length + " messages" : "a range";
      box.appendChild(el("div", "muted", "Replaces " + count + ": " + o.fromMessageId + " … " + o.toMessageId + " (the model reads this summary instead)"));
    }
    (entry.message.parts || []).forEach(function (part) {
      var node = partNode(part);
      if (node) box.appendChild(node);
    });
    if (entry.overlay && entry.overlay.covered) {
      var details = el("details", "originals");
      details.appendChild(el("summary", null, "Show the " + entry.overlay.covered.length + " original messages"));
      entry.overlay.covered.forEach(function (original) { details.appendChild(messageNode(original)); });
      box.appendChild(details);
    }
    return box;
  }

  function setHash() {
    var params = new URLSearchParams();
    if (state.session !== null) params.set("session", state.session);
    if (state.leaf !== null) params.set("leaf", state.leaf);
    if (state.search) {
      Object.keys(state.search).forEach(function (key) {
        // The form's defaults stay out of the address: a shared link shows only what was chosen.
        if (state.search[key] !== SEARCH_DEFAULTS[key]) params.set(key, state.search[key]);
      });
    }
    history.replaceState(null, "", "#" + params.toString());
  }

  function loadSessions() {
    return api("sessions").then(function (answer) {
      var sessions = answer.sessions;
      var nav = $("sessions");
      nav.textContent = "";
      state.keepsFacts = answer.keepsFacts;
      if (sessions.length === 0) nav.appendChild(el("p", "muted", "No sessions."));
      // An empty store shows what it is, not an empty graph, its legend and a facts panel (they wait for a session).
      if (sessions.length === 0 && state.session === null) $("summary").textContent = "This store has no sessions" + (owner ? " of " + owner : "") + " yet.";
      sessions.forEach(function (s) {
        var button = el("button", s.id === state.session ? "selected" : "");
        button.setAttribute("data-session-id", s.id);
        var heading = sessionTitle(s);
        var title = el("div", null, heading);
        if (s.endReason) title.appendChild(el("span", "tag", "ended: " + s.endReason));
        if (s.pinned) title.appendChild(el("span", "tag", "pinned"));
        button.appendChild(title);
        var facts = (s.id === "" || heading === s.id ? "" : s.id + " · ") + count(s.messages, "message") + (s.updatedAt ? " · " + time(s.updatedAt) : "");
        button.appendChild(el("div", "muted", facts));
        button.addEventListener("click", function () { openSession(s.id, null); });
        nav.appendChild(button);
      });
      if (answer.more) {
        nav.appendChild(el("p", "muted", "Only the " + sessions.length + " sessions with the newest activity are listed; agent-session ls lists them all."));
      }
    }).catch(function (error) { showError($("sessions"), error); });
  }

  function showBranch(leaf) {
    var seq = ++state.seq;
    state.leaf = leaf;
    live.following = !state.tree || leaf === state.tree.leafId;
    setHash();
    drawGraph($("graph"), state.tree, leaf, showBranch);
    var conversation = $("conversation");
    return api("history", { id: state.session, leaf: leaf }).then(function (view) {
      if (seq !== state.seq) return;
      $("branch-title").textContent = "Branch to " + (view.leafId || "(empty)") + " · " + view.entries.length + " messages as the model reads them";
      state.view = JSON.stringify(view);
      conversation.textContent = "";
      view.entries.forEach(function (entry) { conversation.appendChild(messageNode(entry)); });
      if (view.entries.length === 0) conversation.appendChild(el("p", "muted", "No messages."));
      var mark = state.mark;
      if (mark && mark.session === state.session && mark.leaf === leaf) markMessage(mark.id, false);
    }).catch(function (error) { showError(conversation, error); });
  }

  // Live updates: one EventSource for the open session; a write to it re-reads the view. A page that follows the
  // latest leaf moves with it; a page showing a chosen branch stays on that branch. The view is read again when
  // the stream opens (and reopens after a drop): a write between the page's first read and the server's
  // subscription sends no event.
  var live = { source: null, following: true, timer: null, written: false };
  function follow(id) {
    if (live.source) live.source.close();
    if (liveOff || typeof EventSource !== "function") return;
    live.source = new EventSource("/api/events?session=" + encodeURIComponent(id) + (owner ? "&owner=" + encodeURIComponent(owner) : ""));
    live.source.onmessage = function () {
      live.written = true;
      reread(id);
    };
    live.source.onopen = function () { reread(id); };
  }

  function reread(id) {
    if (live.timer) return;
    // Writes come in bursts (a turn is several messages): re-read once per burst.
    live.timer = setTimeout(function () {
      live.timer = null;
      var written = live.written;
      live.written = false;
      if (state.session !== id) return;
      api("session", { id: id }).then(function (data) {
        if (state.session !== id) return;
        // A read on (re)open with no write announced mostly finds what is shown. Redrawing it anyway replaced the
        // page under the reader's hand (a click on the graph could land on a node being replaced), so the tree and
        // the shown branch are compared first; an announced write always redraws.
        if (written || !state.tree || JSON.stringify(data) !== JSON.stringify(state.tree)) return update(data);
        var shown = state.view;
        return api("history", { id: id, leaf: state.leaf }).then(function (view) {
          if (state.session === id && JSON.stringify(view) !== shown) return update(data);
        });
      }).catch(function (error) { showError($("summary"), error); });
    }, 100);
  }

  function update(data) {
    state.tree = data;
    renderSummary($("summary"), data, summaryUi);
    loadSessions(); // the sidebar's message count and activity time
    return showBranch(live.following ? data.leafId : state.leaf);
  }

  function openSession(id, leaf) {
    state.session = id;
    $("layout").hidden = false;
    live.following = !leaf;
    follow(id);
    // Opening a session leaves the results (a phone shows one or the other), and the address says so.
    state.search = null;
    state.searchSeq++;
    $("results").textContent = "";
    Array.prototype.forEach.call(document.querySelectorAll("#sessions button"), function (b) {
      b.classList.toggle("selected", b.getAttribute("data-session-id") === id);
    });
    var seq = ++state.seq;
    return api("session", { id: id }).then(function (data) {
      if (seq !== state.seq) return;
      state.tree = data;
      renderSummary($("summary"), data, summaryUi);
      api("blocks", { id: id }).then(function (result) { renderBlocks($("blocks"), result, el); }).catch(function (error) { showError($("blocks"), error); });
      factsUi.open(id, data.summary.owner);
      return showBranch(leaf || data.leafId);
    }).catch(function (error) { showError($("summary"), error); });
  }

  // A hit's summary: the branch ending where the overlay's range ends shows it; its originals are unfolded and the
  // hit among them marked.
  function openSummary(hit) {
    var overlayId = ${JSON.stringify(COMPACTION_PREFIX)} + hit.compactedBy;
    return openSession(hit.sessionId, hit.compaction.toMessageId).then(function () {
      var entry = Array.prototype.filter.call(document.querySelectorAll("#conversation .msg.overlay"), function (node) {
        return node.getAttribute("data-message-id") === overlayId;
      })[0];
      if (!entry) return;
      entry.classList.add("target");
      var details = entry.querySelector("details");
      if (details) details.open = true;
      Array.prototype.forEach.call(entry.querySelectorAll(".msg"), function (node) {
        if (node.getAttribute("data-message-id") === hit.id) node.classList.add("target");
      });
      entry.scrollIntoView({ block: "start" });
    });
  }

  var summaryUi = { el: el, title: sessionTitle, label: sessionLabel, time: time, open: openSession };
  var factsUi = factsPanel({ $: $, el: el, api: api, label: sessionLabel, source: function (sessionId, messageId) {
    var ui = { showBranch: showBranch, openSession: openSession, setMark: function (mark) { state.mark = mark; } };
    ui.current = function () { return { session: state.session, leaf: state.leaf }; };
    showSource(ui, sessionId, messageId);
  } });

  var searchUi = { el: el, label: sessionLabel, open: openSession, openSummary: openSummary, factsLeftOut: function () {
    return state.keepsFacts && !owner;
  } };
  // The search form's fields, as named in the address and the API, with the form's defaults.
  var SEARCH_DEFAULTS = { q: "", branch: "all", role: "", context: "0" };

  function runSearch() {
    var params = {};
    Object.keys(SEARCH_DEFAULTS).forEach(function (key) { params[key] = $(key).value; });
    state.search = params;
    setHash();
    var box = $("results"), seq = ++state.searchSeq;
    api("search", params).then(function (hits) { if (seq === state.searchSeq) renderHits(box, hits, searchUi); })
      .catch(function (error) { if (seq === state.searchSeq) showError(box, error); });
  }

  $("search").addEventListener("submit", function (event) {
    event.preventDefault();
    runSearch();
  });

  var initial = new URLSearchParams(location.hash.slice(1));
  loadSessions().then(function () {
    if (initial.has("session")) openSession(initial.get("session"), initial.get("leaf"));
    if (!initial.has("q")) return;
    fillSearchForm(initial, SEARCH_DEFAULTS, $, el);
    runSearch();
  });
})();
`;
