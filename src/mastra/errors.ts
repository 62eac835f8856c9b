/** The errors Mastra's stores throw where its callers and tests expect one (a `MastraError` of the storage domain). */
import { ErrorCategory, ErrorDomain, MastraError } from "@mastra/core/error";

/** A caller's mistake, as Mastra's stores report it (`category: USER`). */
export function userError(
  id: Uppercase<string>,
  text: string,
  details: Record<string, string | number> = {},
): MastraError {
  return new MastraError({
    id: `AGENT_SESSION_${id}` as Uppercase<string>,
    domain: ErrorDomain.STORAGE,
    category: ErrorCategory.USER,
    text,
    details,
  });
}
