import type { AgentEvent, AgentSession } from "../../../src/agent/index.js";

/** Every event of the latest turn, through its stop event. */
export async function collect(session: AgentSession): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of session.receive()) events.push(event);
  return events;
}

/** Sends and waits for the turn's events. */
export async function turn(session: AgentSession, text: string): Promise<AgentEvent[]> {
  await session.send(text);
  return collect(session);
}

/** The concatenated text deltas. */
export function textOf(events: readonly AgentEvent[]): string {
  return events.map((event) => (event.type === "text" ? event.text : "")).join("");
}

/** The stop event (there is exactly one, last). */
export function stopOf(events: readonly AgentEvent[]): Extract<AgentEvent, { type: "stop" }> {
  const last = events[events.length - 1];
  if (last?.type !== "stop") throw new Error(`the last event is ${last?.type}, not stop`);
  return last;
}
