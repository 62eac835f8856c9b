// What the stdio server needs of its streams, stated here rather than as Node's `Readable`/`Writable` so that the
// shipped declarations need no `@types/node` (a TypeScript 7 app loads none unless it asks).

type Listener = (...args: unknown[]) => void;

/** What the stdio server needs of `stdin` (a Node `Readable`, e.g. `process.stdin`). */
export interface StdioInput {
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  once(event: string, listener: Listener): unknown;
  listenerCount(event: string): number;
  pause(): unknown;
}

/** What the stdio server needs of `stdout` and `stderr` (a Node `Writable`, e.g. `process.stdout`). */
export interface StdioOutput {
  write(chunk: string): boolean;
  once(event: string, listener: Listener): unknown;
}
