/**
 * The `item` line of an export (format version 4): a LangGraph store item (agent-session/langgraph's
 * AgentSessionStore, sql/graph-store/), owner data carried by owner-wide and store-wide exports, opened, with its
 * times and time to live so an import keeps when it was written and when it expires.
 */
import type { GraphItem } from "../../contract/graph-items.js";
import { isOwnerId } from "../../store/owner.js";
import type { Fields } from "./fields.js";

/** The line of one item. */
export function encodeStoreItem(item: GraphItem): string {
  return JSON.stringify({
    type: "item",
    owner: item.owner,
    namespace: item.namespace,
    key: item.key,
    // The value's JSON as stored, as text: parsed and written again it could differ in a byte.
    value: item.value,
    fields: item.fields,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
    ttlMs: item.ttlMs,
    expiresAt: item.expiresAt,
  });
}

/** An item line's fields, checked as a put would take them (an owner, a key, a value that is a JSON object). */
export function decodeItem(f: Fields, record: Record<string, unknown>): GraphItem {
  const nullableCount = (name: string) => (record[name] === null ? null : f.count(name));
  const owner = f.string("owner");
  if (!isOwnerId(owner)) f.fail('"owner" must be an owner id');
  const value = f.string("value");
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    f.fail('"value" must be the JSON of an object');
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    f.fail('"value" must be the JSON of an object');
  }
  return {
    owner,
    namespace: f.string("namespace", true),
    key: f.string("key", true),
    value,
    fields: f.nullableString("fields"),
    createdAt: f.count("createdAt"),
    updatedAt: f.count("updatedAt"),
    ttlMs: nullableCount("ttlMs"),
    expiresAt: nullableCount("expiresAt"),
  };
}
