export { OpenAIAgentsSession } from "./session.js";
