/**
 * The text of the error result that stands in for a tool call lost when its turn stopped (the agent runtime's
 * repair and the chat route's stopped answers): the model reads it as the tool's error.
 */
export const MISSING_RESULT_TEXT =
  "No result: the turn ended before this tool call returned (it may or may not have run).";
