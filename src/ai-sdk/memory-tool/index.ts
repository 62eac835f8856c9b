export { type MemoryFilesContextOptions, memoryFilesContext } from "./context.js";
export { DEFAULT_MEMORY_TOOL_LIMITS, type MemoryFiles, type MemoryToolLimits } from "./directory.js";
export type { MemoryToolCommand } from "./input.js";
export { MEMORIES_ROOT } from "./paths.js";
export {
  type MemoryScope,
  type MemoryTool,
  type MemoryToolHandlers,
  type MemoryToolOptions,
  memoryTool,
  memoryToolKey,
} from "./tool.js";
