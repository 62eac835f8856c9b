import { describe } from "node:test";
import { attachmentsSpec } from "./attachments.spec.js";
import { closedSpec } from "./closed.spec.js";
import { contextStoreSpec } from "./context-store.spec.js";
import { deleteSpec } from "./delete.spec.js";
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
import { persistenceSpec } from "./persistence.spec.js";
import { recallSpec } from "./recall.spec.js";
import { recentSpec } from "./recent.spec.js";
import { registrySpec } from "./registry.spec.js";
import { remindersSpec } from "./reminders.spec.js";
import { searchSpec } from "./search.spec.js";
import { searchAgreementSpec } from "./search-agreement.spec.js";
import { searchBoundsSpec } from "./search-bounds.spec.js";
import { treeSpec } from "./tree.spec.js";
import { writesSpec } from "./writes.spec.js";

export type { ContractTarget } from "./harness.js";

/** The storage contract every backend must pass: one call per backend test file. */
export function runProviderContract(target: ContractTarget): void {
  describe(`${target.name}: storage contract`, () => {
    messagesSpec(target);
    treeSpec(target);
    deleteSpec(target);
    overlaysSpec(target);
    searchSpec(target);
    recallSpec(target);
    searchBoundsSpec(target);
    searchAgreementSpec(target);
    recentSpec(target);
    historyStreamSpec(target);
    persistenceSpec(target);
    contextStoreSpec(target);
    remindersSpec(target);
    writesSpec(target);
    largeSpec(target);
    attachmentsSpec(target);
    importPointersSpec(target);
    idsSpec(target);
    closedSpec(target);
    feedSpec(target);
    // Session registry and SessionManager: skipped on a backend without `store.registry`.
    registrySpec(target);
    managerLifecycleSpec(target);
    managerMessagesSpec(target);
    managerSearchSpec(target);
  });
}
