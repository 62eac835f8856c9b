export { chatErrorResponse } from "./chat-error.js";
export { POSTED_TAIL } from "./chat-request.js";
export {
  type ChatFinishEvent,
  type ChatRequest,
  type ChatRequestBody,
  type ChatTrigger,
  ChatTurn,
  type PersistChatOptions,
  persistChatTurn,
} from "./chat-turn.js";
export { type SessionMemoryMiddleware, type SessionMemoryOptions, sessionMemory } from "./memory.js";
export {
  DEFAULT_MEMORY_TOOL_LIMITS,
  MEMORIES_ROOT,
  type MemoryFiles,
  type MemoryFilesContextOptions,
  type MemoryScope,
  type MemoryTool,
  type MemoryToolCommand,
  type MemoryToolHandlers,
  type MemoryToolLimits,
  type MemoryToolOptions,
  memoryFilesContext,
  memoryTool,
  memoryToolKey,
} from "./memory-tool/index.js";
export { asUIMessages, loadChat } from "./messages.js";
export { type AnswerNotKept, NOT_KEPT_PART } from "./not-kept.js";
export { withReminder } from "./reminder.js";
export { DEFAULT_MAX_REQUEST_BYTES } from "./request-size.js";
export { ResumableStreams, type ResumableStreamsOptions, resumableStreams } from "./resumable.js";
export { type ChatStorage, chatMessageId } from "./storage.js";
