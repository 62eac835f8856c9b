/**
 * The Worker the workerd test runs: a Durable Object with SQLite storage whose Session lives in the object's own
 * database, through the minimal `sql` tag the `agents` package's `Agent` has. Bundled by esbuild from the
 * library's source and run without `nodejs_compat`. `POST /write` exercises every feature, `GET /read` checks
 * what a restarted object sees; `POST /adopt` and `GET /adopt` do the same for adoption (./adopt.ts), in an object
 * of their own; all answer JSON.
 */
import { isCompactionMessage, Session, type SessionMessage } from "../../src/index.js";
import { createCompactFunction } from "../../src/utils/index.js";
import { adoptRead, adoptWrite } from "./adopt.js";
import { BIG_CHARS, bytesProbe, IMAGE_URL } from "./shared.js";

interface SqlStorage {
  exec(query: string, ...bindings: unknown[]): { toArray(): unknown[] };
}
interface ObjectState {
  storage: { sql: SqlStorage; transactionSync<T>(fn: () => T): T };
}
interface Env {
  SESSIONS: {
    idFromName(name: string): unknown;
    get(id: unknown): { fetch(request: Request): Promise<Response> };
  };
}

function text(id: string, body: string): SessionMessage {
  return { id, role: id.startsWith("u") ? "user" : "assistant", parts: [{ type: "text", text: body }] };
}

export class SessionObject {
  private readonly source: {
    ctx: ObjectState;
    sql(strings: TemplateStringsArray, ...values: unknown[]): unknown[];
  };

  constructor(ctx: ObjectState) {
    // What `agents`' Agent.sql does: the template's pieces joined with `?`, values bound in order.
    this.source = {
      ctx,
      sql: (strings, ...values) => ctx.storage.sql.exec(strings.join("?"), ...values).toArray(),
    };
  }

  private session(): Session {
    return Session.create(this.source)
      .forSession("chat")
      .withContext("soul", { provider: { get: async () => "You are terse." } })
      .withContext("memory", { description: "Learned facts", maxTokens: 1000 })
      .onCompaction(
        createCompactFunction({
          summarize: async () => "The user likes coffee.",
          protectHead: 1,
          minTailMessages: 2,
          tailTokenBudget: 0,
        }),
      );
  }

  async fetch(request: Request): Promise<Response> {
    try {
      const step = new URL(request.url).pathname;
      if (step === "/bytes") {
        const runtime = {
          Buffer: typeof (globalThis as { Buffer?: unknown }).Buffer,
          process: typeof (globalThis as { process?: unknown }).process,
        };
        return Response.json({ runtime, probe: bytesProbe() });
      }
      if (step === "/adopt") {
        return Response.json(
          request.method === "POST" ? await adoptWrite(this.source) : await adoptRead(this.source),
        );
      }
      return Response.json(step === "/write" ? await this.write() : await this.read());
    } catch (error) {
      return Response.json(
        { error: error instanceof Error ? `${error.stack ?? error.message}` : String(error) },
        { status: 500 },
      );
    }
  }

  private async write(): Promise<object> {
    const session = this.session();
    await session.appendMessage(text("u1", "I prefer dark roast coffee."));
    await session.appendMessage(text("a1", "Noted: dark roast."));
    await session.appendMessage(text("u2", "And green tea in the afternoon."));
    await session.appendMessage(text("a2", "Green tea, noted."));
    // A second answer to u2: the tree branches.
    await session.appendMessage(text("a2b", "Afternoon tea it is."), "u2");
    await session.appendMessage(text("u3", "What do I drink?"), "a2");
    const branches = (await session.getBranches("u2")).map((m) => m.id);
    const hits = (await session.search("roast")).map((hit) => hit.id);

    const toolResult = await session.executeTool("set_context", {
      label: "memory",
      content: "Likes dark roast.",
    });
    const prompt = await session.freezeSystemPrompt();
    const tools = (await session.toolDefinitions("openai")).map((tool) => tool.function.name);

    // An inline image: offloaded to the attachment tables (base64 and SHA-256 without Buffer or node:crypto).
    const image = {
      id: "u4",
      role: "user",
      parts: [{ type: "file", mediaType: "image/png", url: IMAGE_URL }],
    };
    await session.appendMessage(image as SessionMessage);
    const imageOk = JSON.stringify(await session.getMessage("u4")) === JSON.stringify(image);

    const report = await session.compact();
    const history = await session.getHistory();

    const big = `bigword ${"lorem ipsum ".repeat(Math.ceil(BIG_CHARS / 12))}`.slice(0, BIG_CHARS);
    await session.appendMessage(text("a3", big));
    const bigBack = await session.getMessage("a3");
    const bigHits = (await session.search("bigword")).map((hit) => hit.id);
    return {
      branches,
      hits,
      toolResult,
      prompt,
      tools,
      imageOk,
      compacted: report !== null,
      historyIds: history.map((m) => (isCompactionMessage(m) ? "compaction" : m.id)),
      bigOk: (bigBack?.parts[0] as { text?: string } | undefined)?.text === big,
      bigHits,
    };
  }

  private async read(): Promise<object> {
    const session = this.session();
    const prompt = await session.freezeSystemPrompt();
    const history = await session.getHistory();
    const last = history.at(-1);
    return {
      leaf: (await session.getLatestLeaf())?.id ?? null,
      historyIds: history.map((m) => (isCompactionMessage(m) ? "compaction" : m.id)),
      bigLength: (last?.parts[0] as { text?: string } | undefined)?.text?.length ?? 0,
      branches: (await session.getBranches("u2")).map((m) => m.id),
      hits: (await session.search("green tea")).map((hit) => hit.id),
      memory: session.getContextBlock("memory")?.content ?? null,
      prompt,
      compactions: (await session.getCompactions()).length,
      image: (await session.getMessage("u4"))?.parts[0] ?? null,
    };
  }
}

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    // The adoption test's object has storage of its own.
    const name = new URL(request.url).pathname === "/adopt" ? "adopt" : "one";
    return env.SESSIONS.get(env.SESSIONS.idFromName(name)).fetch(request);
  },
};
