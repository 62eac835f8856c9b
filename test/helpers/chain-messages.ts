// The messages of the chain-step tests (postgres-append-chain, sqlite-step-chain): a text message numbered `at`,
// with its own time and a length that varies with it (so running sums and skip pointers differ row to row).
import type { SessionMessage } from "../../src/contract/message.js";

/** A text message `id`, the `at`-th of its test. */
export const chainText = (id: string, at: number): SessionMessage =>
  ({
    id,
    role: at % 2 ? "assistant" : "user",
    parts: [{ type: "text", text: `message ${id} about tree number ${at} ${"word ".repeat(at % 7)}` }],
    createdAt: new Date(Date.UTC(2025, 0, 1) + at * 1000),
  }) as SessionMessage;
