// A process that records every module of the `eve` package it resolves, imports agent-session/eve, makes a provider
// and recalls with it (no eve module may load), then asks for its tools (eve's tool helper loads: the control).
// Prints { before, after } as JSON.
import { registerHooks } from "node:module";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import { toolsContext, turnStarted, user } from "./contexts.js";

const seen: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    if (resolved.url.includes("/node_modules/eve/")) seen.push(resolved.url);
    return resolved;
  },
});

const { agentSessionMemory } = await import("../../src/eve/index.js");
const provider = agentSessionMemory({ manager: new SessionManager(new MemoryStore()) });
const who = { principal: "alice", eveSession: "s1" };
await provider.recall["turn.started"](turnStarted(who, "t1", 1, [user("hello")], []));
const before = [...seen];
await provider.tools?.(toolsContext(who, "t1", 1));
console.log(JSON.stringify({ before, after: seen }));
