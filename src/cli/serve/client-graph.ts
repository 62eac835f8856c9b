/**
 * Browser code that draws a session's message tree as an SVG graph (plain ES2017, inlined into the page; it
 * avoids template literals so it can live in this TypeScript string). Depth runs downwards; each leaf gets a lane
 * and a parent sits in its first child's lane, so the first branch is a straight line and later branches fan out
 * to the right. Nodes carry `data-node-id`; clicking one reads the branch ending there.
 */
export const GRAPH_SCRIPT = `
var SVG_NS = "http://www.w3.org/2000/svg";
// LABEL_CHARS: an AI SDK id has 16 characters; 12 tell ids apart and keep lanes narrow (the title has the full id).
var STEP_Y = 32, PAD = 16, LABEL_CHARS = 12, CHAR_WIDTH = 6.6;

function labelOf(id) { return id.length > LABEL_CHARS ? id.slice(0, LABEL_CHARS - 1) + "…" : id; }

function svgEl(tag, attrs) {
  var node = document.createElementNS(SVG_NS, tag);
  Object.keys(attrs).forEach(function (key) { node.setAttribute(key, String(attrs[key])); });
  return node;
}

function layoutTree(data) {
  var byId = new Map();
  data.nodes.forEach(function (n) { byId.set(n.id, { node: n, depth: 0, lane: 0 }); });
  // Storage order puts parents before children, so one forward pass sets every depth.
  data.nodes.forEach(function (n) {
    var parent = n.parentId === null ? undefined : byId.get(n.parentId);
    if (parent) byId.get(n.id).depth = parent.depth + 1;
  });
  // Leaves get lanes in depth-first order (explicit stack: conversations can be thousands of messages deep).
  var lanes = 0, stack = data.roots.slice().reverse();
  while (stack.length > 0) {
    var item = byId.get(stack.pop());
    if (!item) continue;
    if (item.node.children.length === 0) item.lane = lanes++;
    for (var i = item.node.children.length - 1; i >= 0; i--) stack.push(item.node.children[i]);
  }
  for (var j = data.nodes.length - 1; j >= 0; j--) {
    var it = byId.get(data.nodes[j].id);
    if (it.node.children.length > 0) it.lane = byId.get(it.node.children[0]).lane;
  }
  return { byId: byId, lanes: Math.max(lanes, 1) };
}

function coveredIds(data) {
  var parents = new Map();
  data.nodes.forEach(function (n) { parents.set(n.id, n.parentId); });
  var covered = new Set();
  data.compactions.forEach(function (c) {
    var path = [];
    for (var id = c.toMessageId; id !== null && id !== undefined; id = parents.get(id)) {
      path.push(id);
      if (id === c.fromMessageId) { path.forEach(function (p) { covered.add(p); }); break; }
    }
  });
  return covered;
}

// Scrolls the graph's own box (never the page) just enough to show the node: the end of the branch shown sits in
// the rightmost lanes of a wide tree, beyond a phone's screen, and a redraw would otherwise reset the scroll to 0.
function reveal(container, node) {
  var box = container.getBoundingClientRect(), r = node.getBoundingClientRect();
  var left = box.left + container.clientLeft, top = box.top + container.clientTop;
  if (r.right > left + container.clientWidth) container.scrollLeft += r.right - left - container.clientWidth + PAD;
  if (r.left < left) container.scrollLeft -= left - r.left + PAD;
  if (r.bottom > top + container.clientHeight) container.scrollTop += r.bottom - top - container.clientHeight + PAD;
  if (r.top < top) container.scrollTop -= top - r.top + PAD;
}

function drawGraph(container, data, selectedId, onPick) {
  var scrollLeft = container.scrollLeft, scrollTop = container.scrollTop, selected = null;
  container.textContent = "";
  if (data.nodes.length === 0) { container.appendChild(document.createTextNode("No messages.")); return; }
  var layout = layoutTree(data), covered = coveredIds(data), maxDepth = 0;
  layout.byId.forEach(function (it) { if (it.depth > maxDepth) maxDepth = it.depth; });
  // Lanes as wide as the longest end-of-branch label, so labels of neighbouring leaves never overlap.
  var longest = 0;
  layout.byId.forEach(function (it) {
    if (it.node.children.length === 0 || it.node.id === selectedId) longest = Math.max(longest, labelOf(it.node.id).length);
  });
  var labelWidth = Math.ceil(longest * CHAR_WIDTH) + 16, STEP_X = Math.max(44, labelWidth + 20);
  var width = PAD * 2 + (layout.lanes - 1) * STEP_X + labelWidth, height = PAD * 2 + maxDepth * STEP_Y;
  var root = svgEl("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height });
  var at = function (it) { return { x: PAD + it.lane * STEP_X, y: PAD + it.depth * STEP_Y }; };
  layout.byId.forEach(function (it) {
    var parent = it.node.parentId === null ? undefined : layout.byId.get(it.node.parentId);
    if (!parent) return;
    var a = at(parent), b = at(it), mid = (a.y + b.y) / 2;
    root.appendChild(svgEl("path", {
      d: "M" + a.x + " " + a.y + " C" + a.x + " " + mid + " " + b.x + " " + mid + " " + b.x + " " + b.y,
      "class": "edge" + (it.node.onActivePath ? " active" : ""),
    }));
  });
  layout.byId.forEach(function (it) {
    var n = it.node, p = at(it), leaf = n.children.length === 0;
    var role = n.role === "user" || n.role === "assistant" ? n.role : "other";
    var classes = ["node", role];
    if (!n.onActivePath) classes.push("inactive");
    if (covered.has(n.id)) classes.push("covered");
    if (n.id === selectedId) classes.push("selected");
    var g = svgEl("g", { "class": classes.join(" "), "data-node-id": n.id, tabindex: 0, role: "button" });
    if (n.id === selectedId) selected = g;
    if (leaf) g.setAttribute("data-leaf", "1");
    var title = svgEl("title", {});
    title.textContent = n.role + " " + n.id + (covered.has(n.id) ? " (replaced by an overlay)" : "") + ": " + n.preview;
    g.appendChild(title);
    g.appendChild(svgEl("circle", { cx: p.x, cy: p.y, r: leaf ? 9 : 7 }));
    if (leaf || n.id === selectedId) {
      var label = svgEl("text", { x: p.x + 13, y: p.y + 4, "class": "label" });
      label.textContent = labelOf(n.id);
      g.appendChild(label);
    }
    g.addEventListener("click", function () { onPick(n.id); });
    g.addEventListener("keydown", function (event) { if (event.key === "Enter") onPick(n.id); });
    root.appendChild(g);
  });
  container.appendChild(root);
  container.scrollLeft = scrollLeft;
  container.scrollTop = scrollTop;
  if (selected) reveal(container, selected);
}
`;
