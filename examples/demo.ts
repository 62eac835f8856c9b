// The quick-start demo: a conversation with a regenerated answer (two branches) on the embedded SQLite default.
// Run with `npm run demo`; it writes ./agent-session.db, the CLI's default database (so `npm run cli -- tree demo`
// reads it, and the CLI's own `demo` command adds its sessions beside it), and can be run again (appends are
// idempotent per id).
import { Session, type SessionMessage } from "../src/index.js";

const text = (id: string, role: string, body: string): SessionMessage => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});

const session = Session.create("./agent-session.db").forSession("demo");

await session.appendMessage(
  text("u1", "user", "We need to ship the deployment before Friday. What could go wrong?"),
);
await session.appendMessage(
  text("a1", "assistant", "The database migration is the riskiest step; run it on staging first."),
);
// Regenerate: a second answer to the same question becomes a sibling branch and the new active path.
await session.appendMessage(
  text(
    "a2",
    "assistant",
    "Deploying late on a Friday leaves no one around to roll back. Deploy Thursday instead.",
  ),
  "u1",
);
await session.appendMessage(text("u2", "user", "Thursday works. Remind me to book the deploy window."));

const show = (title: string, messages: SessionMessage[]) => {
  console.log(`\n${title}`);
  for (const m of messages) console.log(`  ${m.id.padEnd(3)} [${m.role}] ${m.parts[0]?.text ?? ""}`);
};

show("Active branch (latest leaf):", await session.getHistory());
show("Original branch (getHistory('a1')):", await session.getHistory("a1"));
console.log(`\ngetBranches('u1'): ${(await session.getBranches("u1")).map((m) => m.id).join(", ")}`);
console.log(`Path length: ${await session.getPathLength()}`);

for (const query of ["deploy friday", '"database migration"']) {
  const hits = await session.search(query);
  console.log(`\nsearch(${JSON.stringify(query)}): ${hits.length} hit(s)`);
  for (const hit of hits)
    console.log(`  ${hit.id} (${hit.onActivePath ? "active path" : "other branch"}): ${hit.content}`);
}

await session.close();
console.log("\nStored in ./agent-session.db — run `npm run demo` again: appends are idempotent per id.");
// The commands of a checkout (`agent-session` is on PATH only where the package is installed).
console.log(
  "Look inside: npm run cli -- tree demo  (or: npm run cli -- serve; the CLI's default database is this file)",
);
