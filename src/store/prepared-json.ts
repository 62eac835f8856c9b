/**
 * The explicit hand-off of a message's JSON from a Session to this package's providers. A Session serialises
 * every message once to measure it (`maxMessageBytes`); it passes that JSON on as an argument, under this key of
 * the write's options, so the provider stores it instead of serialising the message a second time. A provider
 * reads it only through {@link preparedJson}, synchronously at the start of the write, before anything could
 * have changed the message.
 * @internal
 */
export const PREPARED_JSON: unique symbol = Symbol("agent-session.preparedJson");

/** The options of a write that carries the JSON its caller made of exactly the message it passes. @internal */
export interface PreparedJson {
  readonly [PREPARED_JSON]?: string | undefined;
}

/** The JSON handed over in a write's options, if any. @internal */
export function preparedJson(options: object | undefined): string | undefined {
  return (options as PreparedJson | undefined)?.[PREPARED_JSON];
}

/** A copy of a write's options that also carries the message's JSON. @internal */
export function withPreparedJson<O extends object>(options: O | undefined, json: string): O & PreparedJson {
  return { ...(options as O), [PREPARED_JSON]: json };
}

/**
 * Marks the provider classes of this package that take {@link PREPARED_JSON}; the value is the class's
 * prototype. Only a direct instance is handed the JSON: a user's provider, a wrapper or a subclass of ours may
 * change the message in place before passing it on, and must be serialised anew (so it receives plain options).
 * @internal
 */
export const TAKES_PREPARED_JSON: unique symbol = Symbol("agent-session.takesPreparedJson");

/**
 * True for a direct instance of a class marked with {@link TAKES_PREPARED_JSON} (also behind the manager's
 * activity Proxy, which forwards the prototype and the marker to its target). @internal
 */
export function takesPreparedJson(provider: object): boolean {
  const proto = (provider as { [TAKES_PREPARED_JSON]?: unknown })[TAKES_PREPARED_JSON];
  return proto !== undefined && Object.getPrototypeOf(provider) === proto;
}
