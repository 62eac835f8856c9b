// The createdAt a message may carry: one ISO-8601 rule shared by the append check and the read-side revival, so
// what a write accepts is exactly what a read turns back into a Date. The instant a message carries is its row's
// time too (search hits, since/until), so a write also keeps it to what every backend stores.

// An ISO-8601 date-time as toISOString writes it (extended years included), seconds and offset optional.
export const ISO_DATE_TIME =
  /^(?:\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The earliest time a write accepts: 1 January 4713 BC (year -4712). Postgres's timestamptz starts in November
 * 4714 BC, so this is a round bound every backend stores; the latest a Date holds (+275760) Postgres stores too.
 */
export const EARLIEST_TIME = "-004712-01-01T00:00:00.000Z";
const EARLIEST_MS = Date.parse(EARLIEST_TIME);

/** True for a `createdAt` that stores and reads back as the same instant: a valid Date or an ISO-8601 string. */
export function isValidCreatedAt(value: unknown): value is Date | string {
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  return typeof value === "string" && ISO_DATE_TIME.test(value) && !Number.isNaN(new Date(value).getTime());
}

/** True for a valid `createdAt` before {@link EARLIEST_TIME}, which no write accepts (Postgres cannot hold it). */
export function isBeforeEarliest(value: Date | string): boolean {
  return new Date(value).getTime() < EARLIEST_MS;
}

/**
 * The time a message's row takes from the message itself: its `createdAt` in toISOString form, or undefined when
 * it carries none (the row then takes the write's time). The message was validated, so createdAt is storable.
 */
export function ownTime(message: { createdAt?: unknown }): string | undefined {
  const { createdAt } = message;
  return isValidCreatedAt(createdAt) ? new Date(createdAt).toISOString() : undefined;
}
