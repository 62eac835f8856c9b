import type { SessionTransfer } from "../../contract/transfer.js";

/**
 * Every session of a store once. `sessionIds()` reads in pages by activity, so a session written while the listing
 * runs moves behind the read position and is named again; one id per session is kept to skip it.
 */
export async function* eachSessionOnce(
  transfer: Pick<SessionTransfer, "sessionIds">,
): AsyncGenerator<string> {
  const seen = new Set<string>();
  for await (const id of transfer.sessionIds()) {
    if (seen.has(id)) continue;
    seen.add(id);
    yield id;
  }
}
