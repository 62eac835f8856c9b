import type { Experimental_DownloadFunction as DownloadFunction } from "ai";
import { errorMessage, SessionError } from "../errors.js";
import type { AiModule } from "./ai.js";

/**
 * The AI SDK's download of the media a model does not fetch itself, recording each URL that fails (with why) in
 * `unavailable` and then failing the call: the session retries it, and sends every later call, with a note in that
 * medium's place (`sendable`), so an expired URL costs one failed download instead of failing every turn to come.
 */
export function rememberingDownload(
  ai: AiModule,
  unavailable: Map<string, string>,
  signal: AbortSignal,
): DownloadFunction {
  const fetchOne = ai.createDownload();
  return async (requests) => {
    if (requests.length === 0) return [];
    const results = await Promise.allSettled(
      requests.map(({ url, isUrlSupportedByModel }) =>
        isUrlSupportedByModel ? null : fetchOne({ url, abortSignal: signal }),
      ),
    );
    const failed: string[] = [];
    results.forEach((settled, index) => {
      if (settled.status === "fulfilled") return;
      const url = requests[index]!.url.href;
      unavailable.set(url, errorMessage(settled.reason));
      failed.push(`${url} (${errorMessage(settled.reason)})`);
    });
    if (signal.aborted) throw signal.reason;
    if (failed.length > 0) {
      throw new SessionError(
        "INVALID_MESSAGE",
        `Could not download ${failed.join(", ")}: the model is sent a note in its place from now on`,
        { issues: [{ path: "", rule: "invalid" }] },
      );
    }
    return results.map((settled) => (settled.status === "fulfilled" ? settled.value : null));
  };
}
