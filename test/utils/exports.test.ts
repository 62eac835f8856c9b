import assert from "node:assert/strict";
import { test } from "node:test";
import * as message from "../../src/message/overlay.js";
import * as tokens from "../../src/message/tokens.js";
import * as compactionHelpers from "../../src/utils/compaction-helpers.js";
import * as utils from "../../src/utils/index.js";

test("agent-session/utils exposes the reference's runtime names plus row-size enforcement", () => {
  const expected = [
    "CHARS_PER_TOKEN",
    "COMPACTION_PREFIX",
    "ROW_MAX_BYTES",
    "TOKENS_PER_MESSAGE",
    "WORDS_TOKEN_MULTIPLIER",
    "alignBoundaryBackward",
    "alignBoundaryForward",
    "buildSummaryPrompt",
    "computeSummaryBudget",
    "createCompactFunction",
    "enforceRowSizeLimit",
    "estimateMessageTokens",
    "estimateStringTokens",
    "findTailCutByTokens",
    "isCompactionMessage",
    "sanitizeToolPairs",
    "truncateOlderMessages",
    "truncateToolOutput",
  ];
  assert.deepEqual(Object.keys(utils).sort(), expected.sort());
});

test("the documented tokens and compaction-helpers modules exist and are the same functions", () => {
  assert.equal(tokens.estimateStringTokens, utils.estimateStringTokens);
  assert.equal(tokens.estimateMessageTokens, utils.estimateMessageTokens);
  assert.equal(compactionHelpers.createCompactFunction, utils.createCompactFunction);
  assert.equal(compactionHelpers.isCompactionMessage, message.isCompactionMessage);
  assert.equal(utils.isCompactionMessage, message.isCompactionMessage);
  assert.equal(utils.COMPACTION_PREFIX, "compaction_");
  assert.equal(utils.isCompactionMessage({ id: "compaction_1" }), true);
  assert.equal(utils.isCompactionMessage({ id: "m1" }), false);
});
