import type { SkillProvider } from "../context/types.js";
import { SessionError, StorageError } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import { DESCRIPTION_FIELD, decodeDescription, encodeDescription } from "./description.js";
import { objectKey, skillKeyProblem } from "./keys.js";
import { bucketSkillOptions, skillContent } from "./options-schema.js";

/** One listed object; `metadata` is undefined when the listing does not carry custom metadata. */
export interface SkillBucketObject {
  key: string;
  metadata?: Record<string, string> | undefined;
}

/** One page of a listing; `cursor` continues it while `truncated` is true. */
export interface SkillBucketPage {
  objects: readonly SkillBucketObject[];
  truncated: boolean;
  cursor?: string | undefined;
}

/** The four object operations a bucket skill provider needs; adapters map them onto R2 bindings and S3 clients. */
export interface SkillBucket {
  /** One page of the objects whose key starts with `prefix`, in key order. */
  list(prefix: string, cursor: string | undefined): Promise<SkillBucketPage>;
  /** Custom metadata of one object (null when it is gone); asked only for listed objects without `metadata`. */
  head?(key: string): Promise<Record<string, string> | null>;
  /** The object's text, or null when it does not exist. */
  read(key: string): Promise<string | null>;
  /** Creates or replaces the object with this text and custom metadata. */
  write(key: string, content: string, metadata: Record<string, string>): Promise<void>;
  /** Releases what the adapter created (not what the caller passed in). */
  close?(): Promise<void>;
}

/** Options shared by the bucket skill providers. */
export interface BucketSkillOptions {
  /** Prepended verbatim to every key (include the trailing `/`, e.g. `"skills/"`); default `""`. */
  prefix?: string;
  /** Only these keys (relative to the prefix) are listed and loadable; all when omitted or empty. */
  keys?: readonly string[];
}

/** Options of the R2 and S3 providers: the shared ones plus the listing page size their adapters use. */
export interface BucketProviderOptions extends BucketSkillOptions {
  /** Objects per listing request (S3 `MaxKeys`, R2 `limit`); default the store's own (1000). */
  pageSize?: number;
}

/** HEAD requests in flight at once while listing a store whose listings lack metadata (S3). */
const HEAD_CONCURRENCY = 8;

async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * The reference R2SkillProvider's behaviour over any {@link SkillBucket}: `get()` lists every object under the prefix
 * page by page as `- key` or `- key: description`, `load` refuses keys outside the allow-list without touching
 * storage, and `set` writes regardless of the allow-list with the description as custom metadata.
 */
export class BucketSkillProvider implements SkillProvider {
  private readonly prefix: string;
  private readonly allowed: ReadonlySet<string> | undefined;

  constructor(
    private readonly bucket: SkillBucket,
    options: BucketSkillOptions = {},
  ) {
    const { prefix, keys } = parseInput(bucketSkillOptions, options);
    this.prefix = prefix;
    this.allowed = keys && keys.length > 0 ? new Set(keys) : undefined;
  }

  private allows(key: string): boolean {
    return this.allowed === undefined || this.allowed.has(key);
  }

  // Storage failures surface as StorageError (the tools turn them into "Error: ..." strings for the model).
  private async storage<T>(operation: string, target: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof SessionError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new StorageError(
        `Skill bucket ${operation} of ${JSON.stringify(target)} failed: ${reason}`,
        error,
      );
    }
  }

  /** Lists the skills as `- key` / `- key: description` lines (null when there are none). */
  async get(): Promise<string | null> {
    const lines: string[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await this.storage("list", this.prefix, () => this.bucket.list(this.prefix, cursor));
      // Keys the model could not load (folder markers, `..` segments) are not advertised.
      const wanted = page.objects.flatMap((object) => {
        if (!object.key.startsWith(this.prefix)) return [];
        const key = object.key.slice(this.prefix.length);
        return skillKeyProblem(key) === undefined && this.allows(key) ? [{ ...object, key }] : [];
      });
      const described = await mapLimited(wanted, HEAD_CONCURRENCY, async (object) => {
        const full = `${this.prefix}${object.key}`;
        const head = this.bucket.head;
        const metadata =
          object.metadata ??
          (head ? await this.storage("head", full, () => head.call(this.bucket, full)) : {});
        // An object deleted between the listing and its HEAD is left out.
        if (metadata === null) return undefined;
        const description = decodeDescription(metadata[DESCRIPTION_FIELD]);
        return description ? `- ${object.key}: ${description}` : `- ${object.key}`;
      });
      for (const line of described) if (line !== undefined) lines.push(line);
      if (page.truncated && (!page.cursor || seen.has(page.cursor))) {
        // A missing or repeated cursor would make the next request repeat a page forever.
        throw new StorageError(
          `Skill bucket listing of ${JSON.stringify(this.prefix)} is truncated without a new cursor`,
        );
      }
      if (page.cursor) seen.add(page.cursor);
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor !== undefined);
    return lines.length > 0 ? lines.join("\n") : null;
  }

  /** The skill's text; null when it does not exist or is not in the allow-list (then storage is not asked). */
  async load(key: string): Promise<string | null> {
    const full = objectKey(this.prefix, key);
    if (!this.allows(key)) return null;
    return this.storage("read", full, () => this.bucket.read(full));
  }

  /** Writes a skill (allow-list or not) with its description as the `description` custom metadata. */
  async set(key: string, content: string, description?: string): Promise<void> {
    const full = objectKey(this.prefix, key);
    parseInput(skillContent, content, { path: "content" });
    const encoded = encodeDescription(typeof description === "string" ? description : undefined);
    const metadata: Record<string, string> = encoded === undefined ? {} : { [DESCRIPTION_FIELD]: encoded };
    await this.storage("write", full, () => this.bucket.write(full, content, metadata));
  }

  /** Closes an S3 client the provider created itself; a client or binding passed in is left alone. */
  async close(): Promise<void> {
    await this.bucket.close?.();
  }
}
