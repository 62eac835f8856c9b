/** The key of a searchable entry, as the reference makes it (its slug and hash): the entries tools and adoption key rows with it. */
/** The reference's slug: first 60 characters, lower-cased, runs outside a-z0-9 become "-", trimmed of "-". */
export function slugify(text: string): string {
  return text
    .slice(0, 60)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/** 32-bit FNV-1a over UTF-16 code units, unsigned, in base 36 (the reference's entry hash). */
export function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

/**
 * The key of a keyed `set_context` write: the slug of a non-blank title (or `entry-<hash(title)>` when the slug is
 * empty), otherwise `<slug(content) or "entry">-<hash(content)>`, so near-identical contents still differ.
 */
export function entryKey(content: string, title?: string): string {
  if (title !== undefined && title.trim().length > 0) return slugify(title) || `entry-${fnv1a(title)}`;
  return `${slugify(content) || "entry"}-${fnv1a(content)}`;
}
