/**
 * Puts parents before their children while reading in storage order. Postgres draws an append's seq before the
 * append waits for the session's lock, so under concurrent appenders a child can hold a smaller seq than its
 * parent. Such a row (and anything below it) waits until its parent has gone out, then follows it at once, so
 * siblings keep their seq order (getBranches' order); only the few rows of such a race are ever held.
 */
export class ParentsFirst<R extends { seq: string | number; parent_seq?: string | number | null }> {
  private readonly waiting = new Map<number, R[]>();
  private readonly held = new Map<number, R>();

  /** The rows that can go out once `row` is read: none while its parent has not, else it and its waiting children. */
  *push(row: R): Generator<R> {
    const seq = Number(row.seq);
    const parent = row.parent_seq == null ? null : Number(row.parent_seq);
    if (parent !== null && (parent > seq || this.held.has(parent))) {
      this.held.set(seq, row);
      const siblings = this.waiting.get(parent);
      if (siblings) siblings.push(row);
      else this.waiting.set(parent, [row]);
      return;
    }
    const stack = [row];
    for (let next = stack.pop(); next; next = stack.pop()) {
      yield next;
      const children = this.waiting.get(Number(next.seq));
      if (!children) continue;
      this.waiting.delete(Number(next.seq));
      for (let i = children.length - 1; i >= 0; i--) {
        this.held.delete(Number(children[i]!.seq));
        stack.push(children[i]!);
      }
    }
  }

  /** Rows whose parent never came (it was deleted while the export ran), in storage order. */
  rest(): R[] {
    return [...this.held.values()].sort((a, b) => Number(a.seq) - Number(b.seq));
  }
}
