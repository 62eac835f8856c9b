// The chat app's server: a Hono app with the page, its bundle and the useChat route persisting into agent-session.
// Run with `node --import tsx examples/chat-app/server.ts [--db ./chat.db] [--port 3000]`.
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { convertToModelMessages, stepCountIs, streamText, type UIMessage } from "ai";
import { build } from "esbuild";
import { Hono } from "hono";
import { type ChatRequestBody, persistChatTurn, resumableStreams } from "../../src/ai-sdk/index.js";
import { Session, SqliteStore } from "../../src/index.js";
import { mockChatModel } from "./mock-model.js";

/** The app's message type (an app with metadata, data parts or typed tools puts them here): sessions read it as is. */
export type ChatMessage = UIMessage;

/** A running chat app; `close()` stops the server and closes the store. */
export interface ChatApp {
  url: string;
  close(): Promise<void>;
}

/**
 * Bundles the React page with esbuild (in memory: nothing is written or committed); `alias` maps package names
 * (the tests bundle the page with the previous AI SDK major's `ai` and `@ai-sdk/react`).
 */
async function bundlePage(alias: Record<string, string>): Promise<string> {
  const result = await build({
    alias,
    entryPoints: [fileURLToPath(new URL("./page.tsx", import.meta.url))],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    jsx: "automatic",
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "error",
  });
  return result.outputFiles[0]!.text;
}

function html(id: string, messages: ChatMessage[]): string {
  const data = JSON.stringify({ id, messages }).replace(/</g, "\\u003c");
  return `<!doctype html><html><head><meta charset="utf-8"><title>agent-session chat</title>
<style>body{font:15px system-ui;max-width:44rem;margin:2rem auto}li{margin:.5rem 0}[data-role=user]{font-weight:600}
em{color:#666;margin-right:.5rem}button{margin-left:.5rem}</style></head>
<body><div id="root"></div><script>window.CHAT=${data}</script><script type="module" src="/app.js"></script></body></html>`;
}

/** Starts the app on `port` (0: any free port) with its conversations in the SQLite file `db`. */
export async function startChatApp({
  db,
  port = 0,
  pageAliases = {},
}: {
  db: string;
  port?: number;
  /** esbuild aliases for the page's bundle. */
  pageAliases?: Record<string, string>;
}): Promise<ChatApp> {
  const store = new SqliteStore(db); // one store per process, a Session per request
  // A running answer's chunks are kept in the same SQLite file, so a reloaded page rejoins it (useChat resume).
  const streams = resumableStreams({ store });
  const model = mockChatModel();
  const bundle = await bundlePage(pageAliases);
  const chat = (id: string) =>
    Session.create<ChatMessage>(store)
      .forSession(id)
      .withContext("memory", { description: "Facts about the user", maxTokens: 500 });

  const app = new Hono();
  app.get("/", async (c) => {
    const id = c.req.query("chat") ?? "demo";
    return c.html(html(id, await chat(id).getHistory()));
  });
  app.get("/app.js", (c) => c.body(bundle, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.post("/api/chat", async (c) => {
    const { id, messages, trigger, messageId } = await c.req.json<ChatRequestBody<ChatMessage>>();
    const session = chat(id);
    const turn = await persistChatTurn(session, { messages, trigger, messageId }, { resumable: streams });
    const result = streamText({
      model,
      system: await session.freezeSystemPrompt(),
      messages: await convertToModelMessages(turn.messages),
      tools: await session.tools(),
      stopWhen: stepCountIs(3),
    });
    // No abortSignal: a reload closes the request, and the answer must run on for the page that rejoins it.
    // turn.response: an answer another request overtook (not stored) ends with a data-answer-not-kept part.
    return turn.response(result);
  });
  // useChat({ resume: true }) asks here on every load: 204 when no answer runs, else its events so far, then live.
  app.get("/api/chat/:id/stream", (c) => streams.response(c.req.param("id")));

  const server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve).once("error", reject);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: async () => {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        if ("closeAllConnections" in server) server.closeAllConnections();
      });
      await store.close();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { db: { type: "string" }, port: { type: "string" } } });
  const app = await startChatApp({ db: values.db ?? "./chat-app.db", port: Number(values.port ?? 3000) });
  console.log(`chat app on ${app.url} (Ctrl-C stops it)`);
  process.once("SIGINT", () => void app.close());
}
