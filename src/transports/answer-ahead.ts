/**
 * Answering `initialize` ahead of the bundle (docs/ARCHITECTURE.md, "Answering ahead"). Every host session spawns a
 * server and waits for its `initialize` answer; the MCP SDK alone takes several times a bare Node start to load. The
 * answer is a pure function of the build, the command line, the environment and the host's `initialize` params (the
 * instructions are fixed; nothing in it depends on the catalog), so each answer the SDK gave is recorded in
 * `<cache>/start/`, and the next start with the same inputs sends it from `cli/boot.ts` before the rest loads. The
 * SDK still receives the request and answers it; {@link StdioWire} drops that second answer when it matches the
 * recorded one, and records it again (with a warning) when it does not.
 *
 * This module is in the entry chunk: it imports Node built-ins only.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** Format of a record file; another format is a miss. */
const RECORD_VERSION = 1;

/** Most answers kept per command line (one per distinct host `initialize` params); the oldest goes first. */
export const MAX_ANSWERS = 8;

/** Longest first line read ahead (bytes): a longer one is left to the wire, which bounds and answers it. */
const MAX_FIRST_LINE = 64 * 1024;

/** What decides the answer, besides the host's params: one record file per distinct value. */
export interface AheadInputs {
  /** The package version and the entry file's identity (size and mtime of `dist/cli.js`: a new build is a miss). */
  readonly build: string;
  /** `process.version`. */
  readonly node: string;
  /** `process.cwd()` (relative roots resolve against it). */
  readonly cwd: string;
  /** `process.argv.slice(2)`. */
  readonly args: readonly string[];
  /** The environment; only `SKILLS_SERVE_*` variables (every flag's twin) are part of the key. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** A recorded command line's answers: `initialize` params as JSON text → the result as JSON text. */
interface RecordFile {
  readonly version: number;
  readonly key: string;
  readonly answers: Readonly<Record<string, string>>;
}

/**
 * The state handed from the entry to the stdio wire: where this command line's record is, what was read from stdin
 * while looking for the first line, and the answer already sent, if any.
 */
export interface Ahead {
  /** The record file of this command line (`<cache>/start/<sha256>.json`). */
  readonly file: string;
  /** The key text stored in the file, compared on every read (a hash collision is a miss). */
  readonly key: string;
  /** Bytes read from stdin before the wire took it over, in order (the first line included). */
  readonly pending: readonly Buffer[];
  /** Whether stdin ended while the entry read it. */
  readonly ended: boolean;
  /** The `initialize` answered ahead: its request id and result JSON text. */
  readonly answered?: { readonly id: string | number; readonly result: string };
}

let handed: Ahead | undefined;

/**
 * Takes the state the entry left (once): the stdio adapter passes it to its wire.
 *
 * @returns the state, or `undefined` when the entry did not look ahead (tests that start the server in-process).
 */
export function takeAhead(): Ahead | undefined {
  const ahead = handed;
  handed = undefined;
  return ahead;
}

/**
 * Looks ahead at stdin for `initialize` and answers it from the record when this command line has one. Without a
 * record nothing is read: commands that never read stdin (`check`, `manifest`) are not held up.
 *
 * @param cacheDir the resolved cache directory (absolute).
 * @param inputs what the answer depends on.
 * @param input gives stdin (only asked for when there is a record); paused when this resolves, with nothing lost
 *   (`Ahead.pending` holds what was read).
 * @param output gives stdout, where the answer goes.
 * @returns once the first line was read and answered (or found not answerable), or at once without a record. Never
 *   throws: a missing, unreadable or foreign record is a miss.
 */
export async function lookAhead(
  cacheDir: string,
  inputs: AheadInputs,
  input: () => Readable,
  output: () => Writable,
): Promise<void> {
  const key = keyText(inputs);
  const file = path.join(cacheDir, 'start', `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
  handed = { file, key, pending: [], ended: false };
  const record = readRecord(file, key);
  if (record === undefined) return;
  // From here the start waits for the host, then may answer before the runtime sets its signal handlers: a stop
  // signal is held (and ends the wait) until it does.
  const signalled = holdSignals();
  const { pending, ended } = await firstLine(input(), signalled);
  handed = { file, key, pending, ended };
  const request = parseInitialize(Buffer.concat(pending));
  const result = request === undefined ? undefined : answerOf(record, request.params);
  if (request === undefined || result === undefined) return;
  output().write(`{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":${result}}\n`);
  handed = { file, key, pending, ended, answered: { id: request.id, result } };
}

/** The signals the runtime stops gracefully on (`runtime.ts`, `run`). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Holds SIGINT, SIGTERM and SIGHUP until the runtime sets its own handlers, then raises a held one again for the
 * runtime to handle: without a handler Node would die of the signal instead of stopping gracefully with exit 0.
 *
 * @returns resolves when a signal is held (the start then stops waiting for the host).
 */
function holdSignals(): Promise<void> {
  let held: NodeJS.Signals | undefined;
  let told: () => void = () => undefined;
  const signalled = new Promise<void>((resolve) => {
    told = resolve;
  });
  const hold = (signal: NodeJS.Signals): void => {
    held ??= signal;
    told();
  };
  const handedOver = (event: string | symbol): void => {
    if (!(STOP_SIGNALS as readonly (string | symbol)[]).includes(event)) return;
    process.off('newListener', handedOver);
    // After the runtime has set every handler (synchronously, in one loop).
    setImmediate(() => {
      for (const signal of STOP_SIGNALS) process.off(signal, hold);
      if (held !== undefined) process.kill(process.pid, held);
    });
  };
  for (const signal of STOP_SIGNALS) process.on(signal, hold);
  process.on('newListener', handedOver);
  return signalled;
}

/**
 * Records the SDK's answer to an `initialize` (atomically: a temporary file renamed over the record, so concurrent
 * servers never read half a file), keeping at most {@link MAX_ANSWERS} per command line.
 *
 * @param ahead the state of this start.
 * @param params the request's params as JSON text (`JSON.stringify(message.params)`).
 * @param result the answer's result as JSON text.
 * @throws whatever the file system throws (the caller logs it: a cache that cannot be written costs only the cache).
 */
export function recordAnswer(ahead: Pick<Ahead, 'file' | 'key'>, params: string, result: string): void {
  const kept = Object.entries(readRecord(ahead.file, ahead.key)?.answers ?? {}).filter(([known]) => known !== params);
  const answers = Object.fromEntries([...kept.slice(-(MAX_ANSWERS - 1)), [params, result]]);
  const record: RecordFile = { version: RECORD_VERSION, key: ahead.key, answers };
  mkdirSync(path.dirname(ahead.file), { recursive: true });
  const temporary = `${ahead.file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(record));
  renameSync(temporary, ahead.file);
}

/** The key text of a command line: JSON of every input, `SKILLS_SERVE_*` variables sorted. */
function keyText(inputs: AheadInputs): string {
  const env = Object.entries(inputs.env)
    .filter(([name, value]) => name.startsWith('SKILLS_SERVE_') && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([RECORD_VERSION, inputs.build, inputs.node, inputs.cwd, inputs.args, env]);
}

function readRecord(file: string, key: string): RecordFile | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as Partial<RecordFile>;
    if (record.version !== RECORD_VERSION || record.key !== key) return undefined;
    const answers = record.answers;
    if (typeof answers !== 'object' || answers === null) return undefined;
    return Object.values(answers).every((value) => typeof value === 'string') ? (record as RecordFile) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads stdin until its first newline (or its end, an error, {@link MAX_FIRST_LINE} bytes, or `stop`), then pauses
 * it: what was read is handed on, nothing is lost.
 */
function firstLine(input: Readable, stop: Promise<void>): Promise<{ pending: Buffer[]; ended: boolean }> {
  return new Promise((resolve) => {
    const pending: Buffer[] = [];
    let length = 0;
    let done = false;
    const finish = (ended: boolean): void => {
      if (done) return;
      done = true;
      input.off('data', onData).off('end', onEnd).off('error', onError);
      input.pause();
      resolve({ pending, ended });
    };
    const onData = (chunk: Buffer): void => {
      pending.push(chunk);
      length += chunk.length;
      if (chunk.includes(10) || length >= MAX_FIRST_LINE) finish(false);
    };
    const onEnd = (): void => finish(true);
    // The wire, which reads stdin next, reports the error if it persists.
    const onError = (): void => finish(false);
    input.on('data', onData).once('end', onEnd).once('error', onError);
    void stop.then(() => finish(false));
  });
}

/** The members of an `initialize` request the SDK takes; a line with any other is its to refuse, not ours to answer. */
const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The first line as an `initialize` request exactly as the SDK would take it (only the request members, an id that
 * is a string or a safe integer, params an object), with its params as JSON text; else `undefined`.
 */
function parseInitialize(bytes: Buffer): { id: string | number; params: string } | undefined {
  const newline = bytes.indexOf(10);
  if (newline === -1) return undefined;
  try {
    const message: unknown = JSON.parse(bytes.subarray(0, newline).toString('utf8'));
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
    const fields = message as Record<string, unknown>;
    if (!Object.keys(fields).every((member) => REQUEST_MEMBERS.has(member))) return undefined;
    const { id, params } = fields;
    if (fields['jsonrpc'] !== '2.0' || fields['method'] !== 'initialize') return undefined;
    if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
    return { id: id as string | number, params: JSON.stringify(params) };
  } catch {
    return undefined;
  }
}

/**
 * The recorded result for `params`, written again from its parsed value so that only one JSON object can go out
 * (whatever the file holds); `undefined` when there is none or it is not a JSON object.
 */
function answerOf(record: RecordFile, params: string): string | undefined {
  const text = record.answers[params];
  if (text === undefined) return undefined;
  try {
    const result: unknown = JSON.parse(text);
    return typeof result === 'object' && result !== null && !Array.isArray(result) ? JSON.stringify(result) : undefined;
  } catch {
    return undefined;
  }
}
