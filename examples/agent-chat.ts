/**
 * A terminal chat with a real model that survives restarts.
 *
 *   ANTHROPIC_API_KEY=… npm i @ai-sdk/anthropic && node --import tsx examples/agent-chat.ts
 *   OPENAI_API_KEY=…    npm i @ai-sdk/openai    && node --import tsx examples/agent-chat.ts
 *   node --import tsx examples/agent-chat.ts --resume <session-id>     (continue a stored conversation)
 *
 * Sessions are stored in ./.agent-sessions; type /usage for the token ledger, /exit to leave.
 */
import { createInterface } from "node:readline/promises";
import { tool } from "ai";
import { z } from "zod";
import { type AgentSession, createSession, FileSessionStorage } from "../src/agent/index.js";

const PROVIDERS = [
  { env: "ANTHROPIC_API_KEY", model: "claude-sonnet-4-20250514", pkg: "@ai-sdk/anthropic" },
  { env: "OPENAI_API_KEY", model: "openai:gpt-4o-mini", pkg: "@ai-sdk/openai" },
  { env: "GOOGLE_GENERATIVE_AI_API_KEY", model: "google:gemini-2.5-flash", pkg: "@ai-sdk/google" },
];

const provider = PROVIDERS.find((p) => process.env[p.env]);
if (!provider) {
  console.log("agent-chat needs an API key for a model provider. Set one of:");
  for (const p of PROVIDERS) console.log(`  ${p.env.padEnd(30)} (and npm install ${p.pkg}) → ${p.model}`);
  console.log("then run: node --import tsx examples/agent-chat.ts");
  process.exit(0);
}

const resumeAt = process.argv.indexOf("--resume");
const resume = resumeAt >= 0 ? process.argv[resumeAt + 1] : undefined;

const clock = tool({
  description: "The current date and time",
  inputSchema: z.object({}),
  execute: async () => new Date().toString(),
});

let session: AgentSession;
try {
  session = await createSession({
    model: process.env.AGENT_CHAT_MODEL ?? provider.model,
    tools: { clock },
    systemPrompt: "You are a concise, friendly assistant.",
    sessionStorage: new FileSessionStorage("./.agent-sessions"),
    ...(resume ? { resume } : {}),
  });
} catch (error) {
  // A missing provider package or an unknown session id: the message says what to do.
  console.error((error as Error).message);
  process.exit(1);
}

console.log(`session ${session.id}${resume ? " (resumed)" : ""} — model ${provider.model}; /usage, /exit`);
const terminal = createInterface({ input: process.stdin, output: process.stdout });

async function ask(text: string): Promise<void> {
  await session.send(text);
  for await (const event of session.receive()) {
    if (event.type === "text") process.stdout.write(event.text);
    else if (event.type === "tool-call") console.log(`\n[calling ${event.toolName}]`);
    else if (event.type === "tool-error") console.log(`\n[${event.toolName} failed: ${event.error}]`);
    else if (event.type === "error") console.log(`\n[error: ${event.message}]`);
    else if (event.type === "stop") {
      const u = event.usage;
      console.log(
        `\n[${event.reason}: ${u.inputTokens} in / ${u.outputTokens} out, ${u.cacheReadTokens} cached]`,
      );
    }
  }
}

try {
  while (true) {
    const line = (await terminal.question("> ").catch(() => "/exit")).trim();
    if (line === "/exit") break;
    if (line === "/usage") {
      const usage = session.getUsage();
      console.log(`${usage.steps} calls, ${usage.inputTokens} input and ${usage.outputTokens} output tokens`);
      continue;
    }
    if (line) await ask(line);
  }
} finally {
  terminal.close();
  await session.close();
  console.log(`resume with: node --import tsx examples/agent-chat.ts --resume ${session.id}`);
}
