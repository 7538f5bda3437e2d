/**
 * Results built from pre-serialized parts (docs/ARCHITECTURE.md, "Serving"): entries are serialized once, when they
 * are built, and file contents are sent as base64 without a second copy of the message.
 *
 * A {@link RawJson} or {@link Base64Blob} value inside a result serializes, through `JSON.stringify`, to exactly
 * what its parsed value would (so any transport that stringifies the message sends the same bytes). A transport that
 * knows about them ({@link serializeParts}) instead gets the message text split around them, and writes their text or
 * bytes itself.
 */
import { randomUUID } from 'node:crypto';

/** JSON text that is already serialized (`JSON.stringify` output), embedded in a message as is. */
export class RawJson {
  readonly #value: string | Buffer;

  /**
   * @param value the JSON text of one value, or that text as UTF-8 bytes (for a value sent many times, such as a
   *   cached page: transports write the bytes as they are, without encoding the text again).
   */
  constructor(value: string | Buffer) {
    this.#value = value;
  }

  /** The JSON text. */
  get text(): string {
    return typeof this.#value === 'string' ? this.#value : this.#value.toString('utf8');
  }

  /** The UTF-8 bytes, when the value was given as bytes. */
  get bytes(): Buffer | undefined {
    return typeof this.#value === 'string' ? undefined : this.#value;
  }

  toJSON(): unknown {
    return splicing === undefined ? JSON.parse(this.text) : splicing(this);
  }
}

/** Bytes sent as a standard base64 JSON string. */
export class Base64Blob {
  constructor(readonly bytes: Uint8Array) {}

  toJSON(): unknown {
    return splicing === undefined
      ? Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString('base64')
      : splicing(this);
  }
}

/** While {@link serializeParts} runs: records a part and returns the placeholder it is serialized as. */
let splicing: ((part: RawJson | Base64Blob) => string) | undefined;

/** Placeholders are `"\u0000<random>:<n>"`: a string no client can make the server echo (URIs never hold NUL). */
const TOKEN = `\u0000${randomUUID()}:`;
const ESCAPED_TOKEN = JSON.stringify(TOKEN).slice(0, -1); // `"\u0000…:` as it appears in the text

/** One piece of a serialized message. */
export type MessagePart = string | RawJson | Base64Blob;

/**
 * Serializes a JSON-RPC message into text pieces and the raw parts between them, in order.
 *
 * @param message any JSON-serializable value.
 * @returns pieces whose concatenation (a {@link RawJson}'s text, a {@link Base64Blob}'s base64 in quotes) is exactly
 *   `JSON.stringify(message)`; a single string when there are no raw parts.
 */
export function serializeParts(message: unknown): MessagePart[] {
  const parts: (RawJson | Base64Blob)[] = [];
  splicing = (part) => {
    parts.push(part);
    return `${TOKEN}${parts.length - 1}`;
  };
  let text: string;
  try {
    text = JSON.stringify(message);
  } finally {
    splicing = undefined;
  }
  if (parts.length === 0) return [text];
  const pieces: MessagePart[] = [];
  let at = 0;
  for (let index = 0; index < parts.length; index++) {
    const marker = `${ESCAPED_TOKEN}${index}"`;
    const found = text.indexOf(marker, at);
    if (found === -1) throw new Error('serializeParts: a raw part was serialized twice or not at all');
    pieces.push(text.slice(at, found), parts[index] as RawJson | Base64Blob);
    at = found + marker.length;
  }
  pieces.push(text.slice(at));
  return pieces.filter((piece) => piece !== '');
}

/** Base64 is written in chunks of this many input bytes (a multiple of 3, so chunks concatenate). */
const BASE64_CHUNK_BYTES = 3 * 256 * 1024;

/**
 * The byte chunks of serialized pieces, in order: text as UTF-8, a blob as `"`, its base64 in chunks, `"`.
 *
 * @param pieces from {@link serializeParts}.
 */
export function* partChunks(pieces: readonly MessagePart[]): Generator<string | Buffer> {
  for (const piece of pieces) {
    if (typeof piece === 'string') yield piece;
    else if (piece instanceof RawJson) yield piece.bytes ?? piece.text;
    else {
      const bytes = Buffer.from(piece.bytes.buffer, piece.bytes.byteOffset, piece.bytes.byteLength);
      yield '"';
      for (let offset = 0; offset < bytes.length; offset += BASE64_CHUNK_BYTES) {
        yield bytes.toString('base64', offset, Math.min(bytes.length, offset + BASE64_CHUNK_BYTES));
      }
      yield '"';
    }
  }
}
