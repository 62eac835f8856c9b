/**
 * Browser code that renders a session's stored context (plain ES2017, inlined into the page; no template literals,
 * so it can live in this TypeScript string): its context blocks with any pending reminder, its frozen system prompt,
 * and, folded apart, the library's own rows. Nodes come from `el`, which sets text through `textContent`.
 */
export const BLOCKS_SCRIPT = `
function renderBlocks(box, result, el) {
  box.textContent = "";
  box.appendChild(el("h3", null, "Context blocks"));
  // Labels starting with "_" are reserved for the library's own rows (an agent session's _agent_state header):
  // they are no context block, so they are listed apart, folded.
  var own = result.blocks.filter(function (b) { return b.label.charAt(0) !== "_"; });
  var internal = result.blocks.filter(function (b) { return b.label.charAt(0) === "_"; });
  if (own.length === 0) box.appendChild(el("p", "muted", "No stored blocks."));
  own.forEach(function (b) {
    box.appendChild(el("div", "muted", b.label + " · " + b.key + " · ~" + b.tokens + " tokens"));
    box.appendChild(el("pre", "block", b.content));
    if (b.reminder) {
      box.appendChild(el("div", "muted reminder-note", "Pending reminder: the frozen prompt holds an older value (sent after the cached prefix if the block is whenChanged 'remind', until refreshSystemPrompt())"));
      box.appendChild(el("pre", "block reminder", b.reminder));
    }
  });
  box.appendChild(el("h3", null, "Frozen system prompt"));
  if (result.prompt) {
    box.appendChild(el("div", "muted", result.prompt.key + " · ~" + result.prompt.tokens + " tokens"));
    box.appendChild(el("pre", "block prompt", result.prompt.content));
  } else box.appendChild(el("p", "muted", "None stored."));
  if (internal.length === 0) return;
  var details = el("details", "internal-state");
  details.appendChild(el("summary", null, "Library state (" + internal.length + "): kept by agent-session itself, not sent to the model"));
  internal.forEach(function (b) {
    details.appendChild(el("div", "muted", b.key + " · ~" + b.tokens + " tokens"));
    details.appendChild(el("pre", "block", b.content));
  });
  box.appendChild(details);
}
`;
