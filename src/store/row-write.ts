/**
 * A backend's row write answers with the `seq` of the row it wrote, so what hangs on the row (its payloads'
 * links) is keyed without asking the database again; the pipeline then takes the `seq` off before the result
 * reaches a caller.
 */

/** A row write's result with the `seq` of the row it wrote (undefined when it wrote none). */
export type RowWrite<T, S = number> = T & { seq?: S | undefined };

/** Takes the `seq` off a row write's result (in place: the object is the writer's own, so marks on it stay). */
export function withoutSeq<T extends object, S>(written: RowWrite<T, S>): { seq: S | undefined; result: T } {
  const { seq } = written;
  if (seq !== undefined) delete written.seq;
  return { seq, result: written };
}
