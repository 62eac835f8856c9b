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
