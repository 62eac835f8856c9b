import type { LanguageModel } from "ai";
import { MissingDependencyError, SessionError } from "../errors.js";

/** A resolved model object (never a bare id string). */
export type ModelObject = Exclude<LanguageModel, string>;

/** Imports a module by name; replaceable in tests. */
export type ModuleImporter = (specifier: string) => Promise<unknown>;

interface ProviderSpec {
  /** Packages that can serve the prefix, most recommended first. */
  packages: readonly string[];
  /** The provider function each package exports. */
  exportName: string;
}

/** Provider prefixes ("openai:gpt-4o") and the AI SDK packages that serve them. */
export const PROVIDERS: Readonly<Record<string, ProviderSpec>> = {
  anthropic: { packages: ["@ai-sdk/anthropic"], exportName: "anthropic" },
  openai: { packages: ["@ai-sdk/openai"], exportName: "openai" },
  google: { packages: ["@ai-sdk/google"], exportName: "google" },
  mistral: { packages: ["@ai-sdk/mistral"], exportName: "mistral" },
  groq: { packages: ["@ai-sdk/groq"], exportName: "groq" },
  xai: { packages: ["@ai-sdk/xai"], exportName: "xai" },
  deepseek: { packages: ["@ai-sdk/deepseek"], exportName: "deepseek" },
  ollama: { packages: ["ollama-ai-provider-v2", "ai-sdk-ollama"], exportName: "ollama" },
};

// Bare ids a provider is unmistakable for, so the reference's `model: "claude-sonnet-4-20250514"` works.
const BARE_ID_PREFIXES: readonly [RegExp, string][] = [
  [/^claude-/, "anthropic"],
  [/^(gpt-|chatgpt-|o[1-9](-|$))/, "openai"],
  [/^gemini-/, "google"],
  [/^(mistral-|codestral-|pixtral-|ministral-)/, "mistral"],
  [/^grok-/, "xai"],
  [/^deepseek-/, "deepseek"],
];

/** Which provider and model a string names: "provider:model", "provider/model", or a bare well-known id. */
export function parseModelId(id: string): { provider: string; modelId: string } {
  const match = /^([a-z0-9-]+)[:/](.+)$/i.exec(id);
  if (match && PROVIDERS[match[1]!.toLowerCase()])
    return { provider: match[1]!.toLowerCase(), modelId: match[2]! };
  for (const [pattern, provider] of BARE_ID_PREFIXES) if (pattern.test(id)) return { provider, modelId: id };
  throw new SessionError(
    "INVALID_ARGUMENT",
    `Cannot tell which provider serves model "${id}": write it as "<provider>:<model>" with one of ` +
      `${Object.keys(PROVIDERS).join(", ")}, or pass an AI SDK LanguageModel`,
    { issues: [{ path: "model", rule: "format" }] },
  );
}

function isMissingModule(error: unknown, specifier: string): boolean {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : "";
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && message.includes(specifier);
}

const defaultImporter: ModuleImporter = (specifier) => import(specifier);

/**
 * Turns a model id into an AI SDK model through the provider package the user installed, loaded on demand; a missing
 * package fails with a MissingDependencyError that names it. Model objects pass through unchanged.
 */
export async function resolveModel(
  model: LanguageModel,
  importer: ModuleImporter = defaultImporter,
): Promise<ModelObject> {
  if (typeof model !== "string") {
    if (
      model === null ||
      typeof model !== "object" ||
      typeof (model as { modelId?: unknown }).modelId !== "string"
    ) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "model must be an AI SDK LanguageModel or a model id string",
        { issues: [{ path: "model", rule: "type" }] },
      );
    }
    return model;
  }
  const { provider, modelId } = parseModelId(model);
  const spec = PROVIDERS[provider]!;
  for (const specifier of spec.packages) {
    let loaded: Record<string, unknown>;
    try {
      loaded = (await importer(specifier)) as Record<string, unknown>;
    } catch (error) {
      if (isMissingModule(error, specifier)) continue;
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Loading ${specifier} for model "${model}" failed: ${String(error)}`,
        {
          cause: error,
          issues: [{ path: "model", rule: "invalid" }],
        },
      );
    }
    const factory =
      loaded[spec.exportName] ?? (loaded.default as Record<string, unknown> | undefined)?.[spec.exportName];
    if (typeof factory !== "function") {
      throw new SessionError(
        "UNSUPPORTED",
        `${specifier} does not export "${spec.exportName}"; is it an AI SDK provider?`,
      );
    }
    return (factory as (id: string) => ModelObject)(modelId);
  }
  throw new MissingDependencyError(spec.packages[0]!, `Model "${model}"`);
}

/** "provider:modelId" of a model, as the usage ledger records it. */
export function modelLabel(model: Pick<ModelObject, "provider" | "modelId">): string {
  return `${model.provider}:${model.modelId}`;
}
