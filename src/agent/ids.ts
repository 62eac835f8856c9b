import { randomUUID } from "node:crypto";

/** A new random id with a readable prefix, e.g. `sess_3f2a…`. */
export function newId(prefix: "sess" | "msg"): string {
  return `${prefix}_${randomUUID().replace(/-/g, "")}`;
}
