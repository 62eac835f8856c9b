/**
 * Browser code that arranges search hits for the page (plain ES2017, inlined ahead of the hit renderer; no template
 * literals, so it can live in this TypeScript string). `hitGroups(hits)` touches no DOM.
 *
 * A hit with context is a window along its branch: the turns before it, the hit, the turns after it. Windows of one
 * session that share a turn are merged into one group in conversation order, so every turn is shown once and a hit
 * that is another hit's context is highlighted in place instead of shown again below. Two windows can share turns
 * and then part (their branches fork): the part after the fork becomes a group of its own that names the turn it
 * continues from. Groups come in the order of their best-ranked hit.
 */
export const HIT_GROUPS_SCRIPT = `
function hitGroups(hits) {
  // An item is a turn of a window; items that are hits carry the hit.
  function windowOf(hit) {
    var context = hit.context || { before: [], after: [] };
    var turn = function (t) { return { id: t.id, turn: t, hit: null }; };
    return context.before.map(turn).concat([{ id: hit.id, turn: hit, hit: hit }], context.after.map(turn));
  }

  function idsOf(items) { return new Set(items.map(function (item) { return item.id; })); }

  // Merges items into path (both run along a branch, oldest first, and share a turn). Turns before the first
  // shared one can only come before the path's start; after the shared run, the items either extend the path or
  // fork from it, and the fork is returned as the rest.
  function merge(path, items) {
    var at = new Map();
    path.forEach(function (item, i) { at.set(item.id, i); });
    var k = 0;
    while (!at.has(items[k].id)) k++;
    var merged = path.slice(), pos = at.get(items[k].id), rest = [];
    // (A head that cannot go first is impossible along a tree's branches; it is kept as a group of its own.)
    if (pos === 0) merged = items.slice(0, k).concat(merged);
    else if (k > 0) rest.push({ items: items.slice(0, k), after: null });
    if (pos === 0) pos = k;
    var i = k;
    for (; i < items.length && pos < merged.length && merged[pos].id === items[i].id; i++, pos++) {
      if (items[i].hit) merged[pos] = items[i];
    }
    if (i < items.length) {
      var shown = idsOf(merged);
      var tail = items.slice(i).filter(function (item) { return !shown.has(item.id); });
      if (pos === merged.length) merged = merged.concat(tail);
      else if (tail.length > 0) rest.push({ items: tail, after: merged[pos - 1].id });
    }
    return { items: merged, rest: rest };
  }

  function place(groups, group) {
    var ids = idsOf(group.items);
    for (var g = 0; g < groups.length; g++) {
      var other = groups[g];
      if (other.sessionId !== group.sessionId || !other.items.some(function (item) { return ids.has(item.id); })) continue;
      groups.splice(g, 1);
      var result = merge(other.items, group.items);
      var after = result.items[0] === other.items[0] ? other.after : group.after;
      // The merged group may now reach a third group: placing it again merges that one too.
      place(groups, { sessionId: group.sessionId, items: result.items, rank: Math.min(other.rank, group.rank), after: after });
      result.rest.forEach(function (piece) {
        place(groups, { sessionId: group.sessionId, items: piece.items, rank: group.rank, after: piece.after });
      });
      return;
    }
    groups.push(group);
  }

  var groups = [];
  hits.forEach(function (hit, rank) {
    place(groups, { sessionId: hit.sessionId, items: windowOf(hit), rank: rank, after: null });
  });
  return groups.sort(function (a, b) { return a.rank - b.rank; });
}
`;
