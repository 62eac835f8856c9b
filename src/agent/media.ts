/**
 * What image and file data the AI SDK can send: bytes, base64, a data: URL, or an http(s) URL it downloads. Checked
 * when `send()` takes a message, and again on stored history, which may hold data written before that check.
 */

const SENDABLE_SCHEMES = new Set(["http:", "https:", "data:"]);

/** True when the AI SDK's base64 decoder (`atob` after mapping the URL-safe alphabet) accepts `text`. */
export function isBase64(text: string): boolean {
  try {
    atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return true;
  } catch {
    return false;
  }
}

function urlProblem(url: URL): string | undefined {
  if (!SENDABLE_SCHEMES.has(url.protocol))
    return `is a URL with the scheme ${url.protocol} (only http(s) and data: URLs can be sent)`;
  if (url.protocol !== "data:") return undefined;
  // The AI SDK splits a data URL at its first comma and decodes the rest as base64.
  const href = url.href;
  const comma = href.indexOf(",");
  const mediaType = href.slice("data:".length, comma).split(";")[0];
  if (comma < 0 || !mediaType) return "is a data: URL without a media type and a comma";
  if (!isBase64(href.slice(comma + 1))) return "is a data: URL whose content is not base64";
  return undefined;
}

/** Why image or file `data` cannot be sent to a model, or undefined when it can. */
export function mediaProblem(data: unknown): string | undefined {
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) return undefined;
  if (data instanceof URL) return urlProblem(data);
  if (typeof data !== "string") return "is neither bytes, a string nor a URL";
  if (data.length === 0) return "is empty";
  // Base64 has no colon, so a string with a scheme is a URL or nothing sendable.
  if (/^[a-z][a-z0-9+.-]*:/i.test(data)) {
    let url: URL;
    try {
      url = new URL(data);
    } catch {
      return "is neither base64 nor a valid URL";
    }
    return urlProblem(url);
  }
  return isBase64(data) ? undefined : "is neither base64, a data: URL nor an http(s) URL";
}

/** The http(s) URL a piece of image or file data names, or undefined (bytes, base64, data: URLs). */
export function remoteUrl(data: unknown): string | undefined {
  let url: URL;
  try {
    url = data instanceof URL ? data : new URL(String(data));
  } catch {
    return undefined;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
}
