import { checkTarget, suiteOf, type TestApi } from "../runner.js";
import { attachmentsSpec } from "./attachments.spec.js";
import { attachmentsLifetimeSpec } from "./attachments-lifetime.spec.js";
import { attachmentsTransferSpec } from "./attachments-transfer.spec.js";
import { blockCasSpec } from "./block-cas.spec.js";
import { closedSpec } from "./closed.spec.js";
import { contextRecordsSpec } from "./context-records.spec.js";
import { contextStoreSpec } from "./context-store.spec.js";
import { deleteSpec } from "./delete.spec.js";
import { erasureSpec } from "./erasure.spec.js";
import { factsSpec } from "./facts.spec.js";
import { factsDeletesSpec } from "./facts-deletes.spec.js";
import { factsDoorsSpec } from "./facts-doors.spec.js";
import { factsErasureSpec } from "./facts-erasure.spec.js";
import { factsLearnSpec } from "./facts-learn.spec.js";
import { factsProfileSpec } from "./facts-profile.spec.js";
import { factsRecallSpec } from "./facts-recall.spec.js";
import { factsSourcesSpec } from "./facts-sources.spec.js";
import { factsTransferSpec } from "./facts-transfer.spec.js";
import { feedSpec } from "./feed.spec.js";
import type { ContractTarget } from "./harness.js";
import { historyStreamSpec } from "./history-stream.spec.js";
import { idsSpec } from "./ids.spec.js";
import { importPointersSpec } from "./import-pointers.spec.js";
import { largeSpec } from "./large.spec.js";
import { managerLifecycleSpec } from "./manager-lifecycle.spec.js";
import { managerMessagesSpec } from "./manager-messages.spec.js";
import { managerSearchSpec } from "./manager-search.spec.js";
import { messagesSpec } from "./messages.spec.js";
import { overlaysSpec } from "./overlays.spec.js";
import { ownerSearchSpec } from "./owner-search.spec.js";
import { ownersSpec } from "./owners.spec.js";
import { persistenceSpec } from "./persistence.spec.js";
import { recallSpec } from "./recall.spec.js";
import { recallSiblingsSpec } from "./recall-siblings.spec.js";
import { recallStepsSpec } from "./recall-steps.spec.js";
import { recentSpec } from "./recent.spec.js";
import { recentBudgetsSpec } from "./recent-budgets.spec.js";
import { registrySpec } from "./registry.spec.js";
import { registryLimitsSpec } from "./registry-limits.spec.js";
import { remindersSpec } from "./reminders.spec.js";
import { searchSpec } from "./search.spec.js";
import { searchAgreementSpec } from "./search-agreement.spec.js";
import { searchBoundsSpec } from "./search-bounds.spec.js";
import { searchCjkSpec } from "./search-cjk.spec.js";
import { searchHitsSpec } from "./search-hits.spec.js";
import { searchScaleSpec } from "./search-scale.spec.js";
import { siblingsSpec } from "./siblings.spec.js";
import { stepOwnerSpec } from "./step-owner.spec.js";
import { streamsSpec } from "./streams.spec.js";
import { toolMessagesSpec } from "./tool-messages.spec.js";
import { treeSpec } from "./tree.spec.js";
import { writesSpec } from "./writes.spec.js";

export type { ContractTarget } from "./harness.js";

/**
 * The storage contract every `SessionStore` must pass, declared with the injected runner's `describe`/`it`:
 * one call per backend, e.g. `runProviderContract({ describe, it }, { name, create })`. Capabilities a store
 * lacks (registry, context rows, transfer, feed, reopen) skip with the reason.
 */
export function runProviderContract(api: TestApi, target: ContractTarget): void {
  const suite = suiteOf(api);
  checkTarget(target, "runProviderContract");
  suite.describe(`${target.name}: storage contract`, () => {
    messagesSpec(suite, target);
    treeSpec(suite, target);
    siblingsSpec(suite, target);
    deleteSpec(suite, target);
    overlaysSpec(suite, target);
    searchSpec(suite, target);
    recallSpec(suite, target);
    recallStepsSpec(suite, target);
    recallSiblingsSpec(suite, target);
    searchBoundsSpec(suite, target);
    searchScaleSpec(suite, target);
    searchCjkSpec(suite, target);
    searchAgreementSpec(suite, target);
    searchHitsSpec(suite, target);
    recentSpec(suite, target);
    historyStreamSpec(suite, target);
    toolMessagesSpec(suite, target);
    recentBudgetsSpec(suite, target);
    persistenceSpec(suite, target);
    contextStoreSpec(suite, target);
    blockCasSpec(suite, target);
    contextRecordsSpec(suite, target);
    remindersSpec(suite, target);
    writesSpec(suite, target);
    largeSpec(suite, target);
    attachmentsSpec(suite, target);
    attachmentsLifetimeSpec(suite, target);
    attachmentsTransferSpec(suite, target);
    importPointersSpec(suite, target);
    idsSpec(suite, target);
    closedSpec(suite, target);
    feedSpec(suite, target);
    streamsSpec(suite, target);
    factsSpec(suite, target);
    factsLearnSpec(suite, target);
    factsRecallSpec(suite, target);
    factsProfileSpec(suite, target);
    // Session registry and SessionManager: skipped on a backend without `store.registry`.
    registrySpec(suite, target);
    registryLimitsSpec(suite, target);
    managerLifecycleSpec(suite, target);
    managerMessagesSpec(suite, target);
    ownersSpec(suite, target);
    stepOwnerSpec(suite, target);
    ownerSearchSpec(suite, target);
    erasureSpec(suite, target);
    factsErasureSpec(suite, target);
    factsDoorsSpec(suite, target);
    factsDeletesSpec(suite, target);
    factsSourcesSpec(suite, target);
    factsTransferSpec(suite, target);
    managerSearchSpec(suite, target);
  });
}
