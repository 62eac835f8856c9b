// vectors.nearestMessages() answers what nearest() finds as session and message ids (issue #63: the seqs nearest()
// answers are row numbers no public API maps to messages), on every backend.
import assert from "node:assert/strict";
import { test } from "node:test";
import { channel, describeTargets, seed, withEmbedded } from "./vectors/helpers.js";

await describeTargets((target) => {
  test("nearestMessages answers session and message ids, best first, as nearest finds them", async () => {
    await withEmbedded(target.fresh, async (store) => {
      await seed(store);
      const vectors = channel(store);
      await vectors.idle();
      const seqs = await vectors.nearest("automobile", { limit: 4 });
      const hits = await vectors.nearestMessages("automobile", { limit: 4 });
      assert.deepEqual(
        hits.map((hit) => hit.seq),
        seqs,
      );
      assert.deepEqual(hits[0], { sessionId: "a", messageId: "car", seq: seqs[0] });
      assert.deepEqual(hits.map((hit) => `${hit.sessionId}/${hit.messageId}`).sort(), [
        "a/car",
        "a/doc",
        "b/food",
        "b/music",
      ]);
      // The scope and filters are nearest()'s.
      assert.deepEqual(
        (await vectors.nearestMessages("guitar concert", { limit: 1, sessionId: "b" })).map((hit) => [
          hit.sessionId,
          hit.messageId,
        ]),
        [["b", "music"]],
      );
      assert.deepEqual(await vectors.nearestMessages("automobile", { limit: 3, sessionId: "nobody" }), []);
      await assert.rejects(vectors.nearestMessages("automobile", { limit: -1 }), {
        code: "INVALID_ARGUMENT",
      });
    });
  });
});
