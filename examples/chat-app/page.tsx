// The chat page: AI SDK's useChat against /api/chat, with regenerate and edit, history from the server on load.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type UIMessage } from "ai";
import { type FormEvent, useState } from "react";
import { createRoot } from "react-dom/client";

declare global {
  interface Window {
    CHAT: { id: string; messages: UIMessage[] };
  }
}

const textOf = (message: UIMessage) =>
  message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");

function App() {
  const { messages, sendMessage, regenerate, status } = useChat({
    id: window.CHAT.id,
    messages: window.CHAT.messages,
    transport: new DefaultChatTransport({ api: "/api/chat" }),
    // On load, rejoin an answer still streaming (GET /api/chat/:id/stream; 204 when there is none).
    resume: true,
  });
  const [input, setInput] = useState("");
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const busy = status === "submitted" || status === "streaming";

  const send = (event: FormEvent) => {
    event.preventDefault();
    if (input.trim() === "") return;
    void sendMessage({ text: input });
    setInput("");
  };
  const saveEdit = (event: FormEvent) => {
    event.preventDefault();
    if (!editing) return;
    void sendMessage({ text: editing.text, messageId: editing.id });
    setEditing(null);
  };

  return (
    <main>
      <ol>
        {messages.map((message, index) => (
          <li key={message.id} data-role={message.role} data-testid="message">
            {message.parts.map((part, i) =>
              part.type.startsWith("tool-") ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: parts have no ids and never reorder
                <em key={i} data-testid="tool">
                  [{part.type.slice(5)}]
                </em>
              ) : null,
            )}
            {message.parts.some((part) => part.type === "data-answer-not-kept") && (
              // Another request of the chat stored a message after this answer's question: the store kept that one.
              <em data-testid="not-kept">Not kept: another message came first (reload to see the chat).</em>
            )}
            {editing?.id === message.id ? (
              <form onSubmit={saveEdit}>
                <input
                  data-testid="edit-input"
                  value={editing.text}
                  onChange={(e) => setEditing({ id: message.id, text: e.target.value })}
                />
                <button type="submit" data-testid="save-edit">
                  Save
                </button>
              </form>
            ) : (
              <span data-testid="text">{textOf(message)}</span>
            )}
            {message.role === "user" && !busy && editing === null && (
              <button
                type="button"
                data-testid="edit"
                onClick={() => setEditing({ id: message.id, text: textOf(message) })}
              >
                Edit
              </button>
            )}
            {message.role === "assistant" && index === messages.length - 1 && !busy && (
              <button type="button" data-testid="regenerate" onClick={() => void regenerate()}>
                Regenerate
              </button>
            )}
          </li>
        ))}
      </ol>
      <form onSubmit={send}>
        <input
          data-testid="input"
          value={input}
          onChange={(e) => setInput(e.target.value)}
          placeholder="Say something"
        />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
      <p data-testid="status">{status}</p>
    </main>
  );
}

createRoot(document.getElementById("root")!).render(<App />);
