import { readFileSync, statSync } from "node:fs";
import { base64DecodeCanonical } from "../runtime/bytes.js";
import { KEY_BYTES } from "../store/crypto/keyring.js";
import { CliError } from "./errors.js";

/**
 * The 32-byte key a key file holds: the raw bytes, or their hex (64 characters) or base64 (44) text, surrounding
 * whitespace ignored. Keys are read from files only, never from the command line (every user of the machine may
 * list a process's arguments) nor the environment (children inherit it, CI logs print it).
 */
export function readKeyFile(path: string, option: string): Uint8Array {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat?.isFile()) throw new CliError(`${option}: no key file at ${path}`, "NOT_FOUND");
  const bytes = new Uint8Array(readFileSync(path));
  if (bytes.length === KEY_BYTES) return bytes;
  const text = new TextDecoder().decode(bytes).trim();
  if (/^[0-9a-f]{64}$/i.test(text)) {
    return Uint8Array.from(text.match(/../g)!, (pair) => Number.parseInt(pair, 16));
  }
  const decoded = base64DecodeCanonical(text);
  if (decoded?.length === KEY_BYTES) return decoded;
  throw new CliError(
    `${option}: ${path} does not hold a ${KEY_BYTES}-byte key (raw bytes, 64 hex characters or base64)`,
    "INVALID_ARGUMENT",
  );
}
