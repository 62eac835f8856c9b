/**
 * An append-only event buffer that any number of readers iterate from the start: a turn runs to completion (and
 * persists) whether or not anyone reads, and a reader that starts late still sees every event.
 */
export class EventChannel<T> {
  private readonly items: T[] = [];
  private ended = false;
  private waiters: (() => void)[] = [];

  /** Adds an event; ignored after {@link end}. */
  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake();
  }

  /** Marks the last event: readers finish once they have seen everything. */
  end(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Every event from the first, then each new one as it arrives, until the channel ends. */
  async *read(): AsyncGenerator<T> {
    let index = 0;
    while (true) {
      while (index < this.items.length) yield this.items[index++]!;
      if (this.ended) return;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}
