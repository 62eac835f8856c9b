// The createdAt a message may carry: one ISO-8601 rule shared by the append check and the read-side revival, so
// what a write accepts is exactly what a read turns back into a Date.

// An ISO-8601 date-time as toISOString writes it (extended years included), seconds and offset optional.
export const ISO_DATE_TIME =
  /^(?:\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** True for a `createdAt` that stores and reads back as the same instant: a valid Date or an ISO-8601 string. */
export function isValidCreatedAt(value: unknown): value is Date | string {
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  return typeof value === "string" && ISO_DATE_TIME.test(value) && !Number.isNaN(new Date(value).getTime());
}
