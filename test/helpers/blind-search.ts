// What the blind-index tests of every backend share: the texts two owners write, the queries (families, phrases,
// forms, CJK) an encrypted owner's results are compared on with the same data in clear, and how they are compared.
import type { SearchHit, StoreSearchOptions } from "../../src/contract/search.js";
import type { SessionStore } from "../../src/contract/store.js";
import { SessionManager } from "../../src/manager/manager.js";
import { msg } from "../../src/testing/contract/harness.js";
import { SECRET } from "./encryption.js";

export const TEXTS = [
  `We deployed the ${SECRET} service on Monday`,
  "The deployment failed because the disk was full",
  "She went to the market and bought apples",
  "Deploying again tomorrow after the disk cleanup",
  "机器学习很有趣，我们明天讨论机器学习",
  "Apples and oranges are fruits; the market sells apples",
  `The ${SECRET} token rotates every week`,
  "Nothing about that here",
];

export const QUERIES = [
  SECRET,
  "deploy",
  "deployments disk",
  '"the disk"',
  "went market",
  "go",
  "apple",
  "机器",
  "学习",
  "nothing here",
  // Times (search/date-terms.ts): the turns' own days and one said "tomorrow" on 4 May, as blind tokens too.
  "deploy on 5 May 2023",
  "apples in May 2023",
  "disk on May 2",
];

/** The time of TEXTS[i]: one day apart from 1 May 2023 (its time tokens go in blinded with its words). */
export const timeOf = (i: number): Date => new Date(Date.UTC(2023, 4, 1 + i, 12));

/** Each owner's session of TEXTS (in order; message ids `<owner><i>`), in the order of `owners`. */
export async function seedTexts(store: SessionStore, owners: readonly string[] = ["alice", "carol"]) {
  const manager = SessionManager.create(store);
  const ids: string[] = [];
  for (const owner of owners) {
    const { id } = await manager.create(`${owner} chat`, { owner });
    for (const [i, text] of TEXTS.entries())
      await manager.append(id, msg(`${owner}${i}`, text, "user", { createdAt: timeOf(i) }));
    ids.push(id);
  }
  return { manager, ids };
}

/** A search scope built from the seeded session ids (they differ between stores; message ids do not). */
export type Scope = (ids: string[]) => StoreSearchOptions;

export const SCOPES: Scope[] = [
  (ids) => ({ sessionId: ids[0]! }),
  () => ({ owner: "alice" }),
  (ids) => ({ sessionIds: ids }),
];

const ranked = (hits: SearchHit[]) => hits.map((h) => [h.id, h.score?.toFixed(9)]);

/** Every query's hits (ids and scores) in `scope`. */
export async function answers(store: SessionStore, scope: Scope, ids: string[], match: "any" | "all") {
  const out: unknown[] = [];
  for (const query of QUERIES)
    out.push([query, ranked(await store.searchMessages(query, { ...scope(ids), match }))]);
  return out;
}
