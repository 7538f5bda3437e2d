/**
 * The stdio wire: newline-delimited JSON-RPC on stdin/stdout, as the MCP stdio transport defines it, with bounds
 * (docs/ARCHITECTURE.md, "Transports").
 *
 * - **Reading** frames lines as they stream. A line longer than {@link MAX_LINE_BYTES} is discarded as it arrives,
 *   never buffered whole, and answered with a JSON-RPC error (`id: null`); memory stays bounded whatever the host
 *   sends. Lines the SDK would drop without a word (not JSON, not JSON-RPC, a request with a usable `id` but a bad
 *   shape) are answered too (`jsonrpc-gate.ts`). Everything else is parsed as the SDK parses it and handed on.
 * - **Writing** sends each message whole and in order; pre-serialized entries and base64 blobs in a result are
 *   written as they are, without building the message as one string (`raw-json.ts`).
 * - When stdin ends, the requests already read are answered first (bounded), then it closes; it closes at once when
 *   stdout fails (the host went away). `onclose` fires once.
 * - **Answering ahead** (`answer-ahead.ts`): it first reads what the entry read of stdin; the SDK's answer to an
 *   `initialize` the entry already answered is not written again, and every `initialize` answer is recorded for the
 *   next start.
 */
import type { Readable, Writable } from 'node:stream';

import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { INVALID_REQUEST } from '@modelcontextprotocol/server';

import { classifyLine, type LineVerdict } from '../wire/jsonrpc-gate.js';
import { type MessagePart, partChunks, serializeParts } from '../wire/raw-json.js';
import { type Ahead, recordAnswer } from './answer-ahead.js';

/** Bytes of one message queued on stdout before its next chunk waits for the host to read (a few chunks in flight). */
export const WRITE_AHEAD_BYTES = 4 * 1024 * 1024;

/** Longest line read from stdin (bytes); longer ones are discarded and answered with an error. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** A line that was not handed on, and why. */
export type Rejection =
  | Extract<LineVerdict, { kind: 'reject' }>
  | {
      readonly kind: 'too-long';
      readonly id: null;
      readonly code: typeof INVALID_REQUEST;
      readonly message: string;
      readonly bytes: number;
    };

/** How long stdin's end waits for the answers to requests already read (ms). */
export const ANSWER_TIMEOUT_MS = 5000;

/** What the wire tells about answering ahead (for the log). */
export type AheadEvent =
  | { readonly kind: 'answered'; readonly id: string | number }
  | { readonly kind: 'differs'; readonly id: string | number }
  | { readonly kind: 'record-failed'; readonly error: Error };

/** Answering ahead, for the stdio process (`answer-ahead.ts`). */
export interface AheadOptions {
  /** What the entry read and answered. */
  readonly ahead: Ahead;
  /** Told when an answer was sent ahead, differed from the SDK's, or could not be recorded. */
  readonly onEvent: (event: AheadEvent) => void;
}

/** A transport over a readable (stdin) and a writable (stdout) stream. */
export class StdioWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #onReject: (rejection: Rejection, preview: string) => void;
  #parts: Buffer[] = [];
  #length = 0;
  /** Bytes of the line being discarded (over the limit), or -1. */
  #discarding = -1;
  #closed = false;
  #reading = true;
  #writing: Promise<void> = Promise.resolve();
  /** Ids of requests read and not answered yet (`subscriptions/listen` streams left out: they last). */
  readonly #unanswered = new Set<string | number>();
  readonly #whenAnswered = new Set<() => void>();
  readonly #ahead: AheadOptions | undefined;
  /** The `initialize` the entry answered, until the SDK's answer to it comes (and is not written). */
  #sentAhead: { readonly id: string | number; readonly result: string } | undefined;
  /** `initialize` requests read and not answered yet: id → params as JSON text (what an answer is recorded under). */
  readonly #initializes = new Map<string | number, string>();

  /**
   * @param input stdin.
   * @param output stdout.
   * @param onReject told about every line answered with an error instead of being handed on (for the log).
   * @param ahead answering ahead, for the stdio process; `undefined` records nothing.
   */
  constructor(
    input: Readable,
    output: Writable,
    onReject: (rejection: Rejection, preview: string) => void,
    ahead?: AheadOptions,
  ) {
    this.#input = input;
    this.#output = output;
    this.#onReject = onReject;
    this.#ahead = ahead;
    this.#sentAhead = ahead?.ahead.answered;
  }

  /** Starts reading stdin: first what the entry read ahead, then the stream. */
  async start(): Promise<void> {
    this.#output.on('error', this.#onOutputError);
    const ahead = this.#ahead?.ahead;
    if (ahead?.answered !== undefined) this.#ahead?.onEvent({ kind: 'answered', id: ahead.answered.id });
    for (const chunk of ahead?.pending ?? []) {
      this.#onData(chunk);
      if (this.#closed) return;
    }
    if (ahead?.ended === true) {
      setImmediate(this.#onEnd);
      return;
    }
    this.#input.on('data', this.#onData);
    this.#input.on('end', this.#onEnd);
    this.#input.on('close', this.#onEnd);
    this.#input.on('error', this.#onInputError);
    // The entry pauses stdin after reading ahead; a 'data' listener alone does not resume a paused stream.
    this.#input.resume();
    if (this.#input.readableEnded || this.#input.destroyed) setImmediate(this.#onEnd);
  }

  /**
   * Writes one message. Messages are written whole, in the order `send` was called.
   *
   * @throws Error when the wire is closed or stdout failed.
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('the stdio wire is closed'));
    const initialize = this.#initializeAnswer(message);
    if (initialize?.sentAhead === true) {
      this.#answered(message);
      return Promise.resolve();
    }

    const pieces = serializeParts(message);
    this.#answered(message);
    const written = this.#writing.then(() => this.#write(pieces));
    this.#writing = written.catch(() => undefined);
    if (initialize?.result !== undefined && initialize.params !== undefined) {
      const { params, result } = initialize;
      void written.then(
        () => this.#record(params, result),
        () => undefined,
      );
    }
    return written;
  }

  /** Counts `message` as the answer to its request, when it is one. */
  #answered(message: JSONRPCMessage): void {
    if (
      'id' in message &&
      !('method' in message) &&
      (message.id === null || message.id === undefined || this.#unanswered.delete(message.id)) &&
      this.#unanswered.size === 0
    ) {
      for (const resolve of this.#whenAnswered) resolve();
      this.#whenAnswered.clear();
    }
  }

  /**
   * When `message` answers an `initialize`: its params, its result as JSON text (`undefined` for an error), and
   * whether the entry already sent the answer (the first answer to that id; told as `differs` when the SDK's is not
   * the same, and then recorded again).
   */
  #initializeAnswer(
    message: JSONRPCMessage,
  ): { params: string | undefined; result: string | undefined; sentAhead: boolean } | undefined {
    if ('method' in message || !('id' in message) || message.id === undefined || message.id === null) return undefined;
    const params = this.#initializes.get(message.id);
    const sent = this.#sentAhead;
    const ahead = sent !== undefined && sent.id === message.id;
    if (params === undefined && !ahead) return undefined;
    this.#initializes.delete(message.id);
    const result = 'result' in message ? JSON.stringify(message.result) : undefined;
    if (!ahead) return { params, result, sentAhead: false };
    this.#sentAhead = undefined;
    if (result !== sent.result) {
      this.#ahead?.onEvent({ kind: 'differs', id: message.id });
      if (result !== undefined && params !== undefined) this.#record(params, result);
    }
    return { params, result, sentAhead: true };
  }

  #record(params: string, result: string): void {
    const ahead = this.#ahead;
    if (ahead === undefined) return;
    try {
      recordAnswer(ahead.ahead, params, result);
    } catch (error) {
      ahead.onEvent({ kind: 'record-failed', error: error as Error });
    }
  }

  /** Stops reading and writing; `onclose` fires (once). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.stopReading();
    this.#closed = true;
    this.onclose?.();
  }

  /** Stops reading stdin (what was read is still answered). Idempotent. */
  stopReading(): void {
    if (!this.#reading) return;
    this.#reading = false;
    this.#input.off('data', this.#onData);
    this.#input.off('end', this.#onEnd);
    this.#input.off('close', this.#onEnd);
    this.#input.off('error', this.#onInputError);
    this.#input.pause();
    this.#parts = [];
  }

  /**
   * Resolves once every request read so far has been answered (long-lived `subscriptions/listen` streams aside), or
   * after `timeoutMs`.
   *
   * @returns whether they were all answered.
   */
  whenAnswered(timeoutMs: number): Promise<boolean> {
    if (this.#unanswered.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#whenAnswered.delete(done);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#whenAnswered.delete(done);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      this.#whenAnswered.add(done);
    });
  }

  /** Resolves once everything sent so far has been handed to stdout. */
  flushed(): Promise<void> {
    return this.#writing;
  }

  async #write(pieces: readonly MessagePart[]): Promise<void> {
    const output = this.#output;
    // Backpressure: a large blob's base64 is produced only as fast as the host reads it, so memory holds at most
    // about WRITE_AHEAD_BYTES of it, not the whole message; the next message waits until this one has drained.
    // Both listeners go when either fires: a host that reads slowly makes this wait thousands of times.
    const drained = (): Promise<void> =>
      new Promise<void>((resolve) => {
        const done = (): void => {
          output.off('drain', done).off('close', done);
          resolve();
        };
        output.once('drain', done).once('close', done);
      });
    for (const chunk of partChunks(pieces)) {
      if (output.destroyed || output.writableEnded) throw new Error('stdout is closed');
      if (!output.write(chunk) && output.writableLength > WRITE_AHEAD_BYTES && !output.destroyed) await drained();
    }
    if (!output.write('\n') && !output.destroyed) await drained();
  }

  readonly #onData = (chunk: Buffer): void => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.#take(chunk.subarray(start, newline));
      this.#endLine();
      start = newline + 1;
      if (this.#closed) return;
    }
    if (start < chunk.length) this.#take(chunk.subarray(start));
  };

  /** Adds bytes to the current line, or counts them once it is over the limit. */
  #take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.#discarding !== -1) {
      this.#discarding += bytes.length;
      return;
    }
    if (this.#length + bytes.length > MAX_LINE_BYTES) {
      this.#discarding = this.#length + bytes.length;
      this.#parts = [];
      this.#length = 0;
      return;
    }
    this.#parts.push(bytes);
    this.#length += bytes.length;
  }

  #endLine(): void {
    if (this.#discarding !== -1) {
      const bytes = this.#discarding;
      this.#discarding = -1;
      this.#reject(
        {
          kind: 'too-long',
          id: null,
          code: INVALID_REQUEST,
          message: `Invalid Request: the message is ${bytes} bytes; the limit is ${MAX_LINE_BYTES}`,
          bytes,
        },
        '',
      );
      return;
    }
    const parts = this.#parts;
    this.#parts = [];
    this.#length = 0;
    let line = parts.length === 1 ? (parts[0] as Buffer).toString('utf8') : Buffer.concat(parts).toString('utf8');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const verdict = classifyLine(line);
    if (verdict.kind === 'blank') return;
    if (verdict.kind === 'reject') {
      this.#reject(verdict, line.slice(0, 200));
      return;
    }
    if (verdict.kind === 'unusable') {
      this.onerror?.(new Error(`ignored a line from the client: ${verdict.reason}`));
      return;
    }
    const { message } = verdict;
    if ('method' in message && 'id' in message && message.method !== 'subscriptions/listen')
      this.#unanswered.add(message.id);
    if ('method' in message && 'id' in message && message.method === 'initialize')
      this.#initializes.set(message.id, JSON.stringify(message.params ?? null));
    this.onmessage?.(message);
  }

  #reject(rejection: Rejection, preview: string): void {
    this.#onReject(rejection, preview);
    // JSON-RPC 2.0 answers an unidentifiable request with `id: null`, which the SDK's message type does not model.
    const answer = {
      jsonrpc: '2.0',
      id: rejection.id,
      error: { code: rejection.code, message: rejection.message },
    } as unknown as JSONRPCMessage;
    this.send(answer).catch(() => undefined);
  }

  /** Stdin ended: what was read is answered first (bounded), then the wire closes. */
  readonly #onEnd = (): void => {
    if (!this.#reading) return;
    // A last message without its newline (`printf '{…}' | skills-serve`) is still a whole line: stdin ended it.
    if (this.#length > 0 || this.#discarding !== -1) this.#endLine();
    this.stopReading();
    void this.whenAnswered(ANSWER_TIMEOUT_MS)
      .then(() => this.flushed())
      .then(() => this.close());
  };

  readonly #onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onOutputError = (error: NodeJS.ErrnoException): void => {
    // EPIPE and friends: the host is gone; nothing more can be said to it, and nothing is wrong with the server.
    const hostGone = error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED' || error.code === 'ECONNRESET';
    if (!this.#closed && !hostGone) this.onerror?.(error);
    void this.close();
  };

  /** Whether the wire is closed (errors after that are the host having gone, not failures). */
  get closed(): boolean {
    return this.#closed;
  }
}
