/**
 * `agent-session/embedders`: embedders that run on this machine, for a store's `embedder` option (docs/RECALL.md,
 * "An offline sentence encoder"). Importing this entry loads no package; each embedder imports its own on first use.
 */
export {
  loadSentenceEncoder,
  SENTENCE_ENCODER_DIMENSIONS,
  type SentenceEmbedder,
  type SentenceEncoderModel,
  type SentenceEncoderOptions,
  sentenceEncoderEmbedder,
} from "./sentence-encoder.js";
