import { SessionError, type SessionErrorCode } from "../errors.js";

/** The HTTP status of each refusal a chat request can meet before the model runs (the rest are 500s). */
const STATUS: Partial<Record<SessionErrorCode, number>> = {
  INVALID_MESSAGE: 400,
  INVALID_ARGUMENT: 400,
  RESERVED_ID: 400,
  UNSUPPORTED: 400,
  PARENT_NOT_FOUND: 409,
  NOT_FOUND: 404,
  CONFLICT: 409,
  TOO_LARGE: 413,
};

/**
 * The response a chat route answers when `persistChatTurn` refused the request: 409 for `CONFLICT` (the page no
 * longer matches the store, or another request of the chat came first: reload with `loadChat`), 400 for bad
 * input, 404, 413; the body is `{ error: { code, message } }`, which `useChat` puts in `error.message`. Any other
 * error (a store failure) is thrown on, for the app's own handling.
 */
export function chatErrorResponse(error: unknown): Response {
  const status = error instanceof SessionError ? STATUS[error.code] : undefined;
  if (status === undefined) throw error;
  const { code, message } = error as SessionError;
  return Response.json({ error: { code, message } }, { status });
}
