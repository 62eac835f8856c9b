import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { modelMessageSchema, tool } from "ai";
import { z } from "zod";
import {
  type AgentMessage,
  FileSessionStorage,
  resumeSession,
  type SessionStorage,
  SQLiteSessionStorage,
} from "../../src/agent/index.js";
import { promptOf, scriptedModel } from "./helpers/mock-model.js";
import { stopOf, turn } from "./helpers/session.js";

const root = mkdtempSync(join(tmpdir(), "agent-crash-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
const child = fileURLToPath(new URL("./fixtures/crash-child.ts", import.meta.url));

/**
 * Runs the child until it announces the hang point, then kills it with SIGKILL (no cleanup code runs). The deadline
 * only keeps a child that never gets there from hanging the file: tsx transforms the sources again in each child,
 * which took over 20 s on a 2-core machine at load 27.
 */
function runAndKill(kind: string, path: string, point: string): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", child, kind, path, point], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`the child never reached its hang point; stderr: ${stderr}`));
    }, 180_000);
    proc.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    proc.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("HANGING")) proc.kill("SIGKILL");
    });
    proc.on("exit", (_code, signal) => {
      clearTimeout(timer);
      resolve(signal);
    });
  });
}

const lookup = tool({
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `Sunny in ${city}`,
});

function shape(messages: readonly AgentMessage[]): string[] {
  return messages.map((m) => `${m.role}${m.metadata?.synthetic ? `:${m.metadata.synthetic}` : ""}`);
}

function assertValidHistory(messages: readonly AgentMessage[]): void {
  for (const message of messages) {
    const { id: _id, createdAt: _at, metadata: _meta, ...plain } = message;
    assert.ok(modelMessageSchema.safeParse(plain).success, JSON.stringify(plain));
  }
}

const storages: [string, (path: string) => SessionStorage, (dir: string) => string][] = [
  ["file", (path) => new FileSessionStorage(path), (dir) => dir],
  ["sqlite", (path) => new SQLiteSessionStorage(path), (dir) => join(dir, "sessions.db")],
];

for (const [kind, open, pathIn] of storages) {
  describe(`resume after a SIGKILL mid-turn (${kind} storage)`, () => {
    it("keeps everything up to the last completed step, marks the turn interrupted, and the next call is valid", async () => {
      const path = pathIn(mkdtempSync(join(root, `${kind}-`)));
      assert.equal(await runAndKill(kind, path, "second-step"), "SIGKILL");
      const storage = open(path);
      const before = (await storage.load("crash-1"))!;
      assert.deepEqual(
        shape(before.messages),
        ["user", "assistant", "tool"],
        "step 1 was stored before step 2 began",
      );
      assert.equal((before.metadata["agent.turn"] as { status: string }).status, "running");
      assert.equal(before.usage.steps, 1);

      const model = scriptedModel([{ text: "It is sunny in Oslo." }]);
      const session = await resumeSession("crash-1", { model, tools: { lookup }, sessionStorage: storage });
      const repaired = session.getMessages();
      assert.deepEqual(shape(repaired), ["user", "assistant", "tool", "assistant:interrupted"]);
      assert.equal(repaired.at(-1)?.metadata?.interrupted, true);
      assertValidHistory(repaired);
      const stored = (await storage.load("crash-1"))!;
      assert.equal((stored.metadata["agent.turn"] as { status: string }).status, "interrupted");

      const stop = stopOf(await turn(session, "So, what is the weather?"));
      assert.equal(stop.reason, "completed");
      assert.equal(stop.turn, 2);
      assert.deepEqual(
        promptOf(model, 0).map((m) => m.role),
        ["user", "assistant", "tool", "assistant", "user"],
      );
      await session.close();
      await storage.close?.();
    });

    it("a kill while a tool runs loses only that step; the turn is closed with a note", async () => {
      const path = pathIn(mkdtempSync(join(root, `${kind}-`)));
      assert.equal(await runAndKill(kind, path, "in-tool"), "SIGKILL");
      const storage = open(path);
      const model = scriptedModel([{ text: "Sorry, where were we?" }]);
      const session = await resumeSession("crash-1", { model, sessionStorage: storage });
      assert.deepEqual(shape(session.getMessages()), ["user", "assistant:interrupted"]);
      assert.equal(stopOf(await turn(session, "Weather in Oslo?")).reason, "completed");
      await storage.close?.();
    });
  });
}
