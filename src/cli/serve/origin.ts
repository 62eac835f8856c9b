/**
 * True when a request may be answered: it names no `Origin` (curl, scripts, a browser's same-origin GET), or the
 * origin it names is the one the viewer was reached at (`http://` + its `Host`). A page elsewhere can make a
 * browser send requests here (an image, a form, `fetch` in no-cors mode, an EventSource) and the browser then
 * names that page's origin, so those are refused even when they arrive through a loopback Host.
 */
export function isOwnOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true;
  if (!host) return false;
  try {
    // Both through URL: the same normalisation (case, default port) on each side.
    return new URL(origin).origin === new URL(`http://${host}`).origin;
  } catch {
    // "null" (a sandboxed frame, a file) or a malformed value: not our origin.
    return false;
  }
}

/**
 * The header the viewer's page sends on every API `fetch`. A page on another origin cannot send it: a custom
 * header makes a browser ask first (a CORS preflight), and the viewer answers no preflight.
 */
export const SAME_ORIGIN_HEADER = "x-agent-session-viewer";

/**
 * True when an API request shows it comes from the viewer's own page or from a tool: the viewer's header (a
 * script, curl, the page's fetches), or a browser's `Sec-Fetch-Site: same-origin` (the page's EventSource, which
 * cannot set headers). An `<img>`, `<script>` or no-cors fetch from another page names no `Origin` on a GET, so
 * the Origin check alone lets it through; it carries neither signal (its `Sec-Fetch-Site` is `cross-site` or
 * `same-site`), and is refused.
 */
export function hasSameOriginSignal(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): boolean {
  return headers[SAME_ORIGIN_HEADER] !== undefined || headers["sec-fetch-site"] === "same-origin";
}
