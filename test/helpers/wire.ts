/**
 * The one raw server process of the tests: a byte-exact view of the stdio wire, for tests of the wire itself, the
 * process around it (exit codes, signals, stderr) and faults. Spawns the built CLI (optionally through a wrapper
 * command such as `setpriv`, `sh -c 'ulimit …; exec …'` or `unshare`, or another copy of the CLI), splits stdout into
 * lines as bytes (so a UTF-8 sequence split across pipe reads is never mangled), keeps every message and every line
 * that is not a JSON-RPC 2.0 message, and counts responses per id so that "answered exactly once" can be asserted.
 * The one way tests start a server process: a host with an SDK client is `connect` in `server.ts` over it, an HTTP
 * server `startHttpServer` there; one-shot commands (`check`, `manifest`) run through `cli.ts`.
 *
 * Every wait is bounded; {@link stopAll} ends whatever a test file started (stdin end, then SIGKILL by pid).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { type LogLine, logLines } from './logs.js';
import { BIN, TEST_CACHE } from './paths.js';
import { WAIT_MS } from './wait.js';

export type Message = Record<string, unknown>;

/** A V8 stack frame (`at fn (file:///…:1:2)`, `at node:internal/…`), on stdout or stderr. */
export const STACK_FRAME = /\bat (?:\S+ \()?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+/u;

/** JSON-RPC id as a map key: `n:1`, `s:abc`, `null`. */
export function idKey(id: unknown): string {
  if (id === null) return 'null';
  if (typeof id === 'number') return `n:${id}`;
  if (typeof id === 'string') return `s:${id}`;
  return `?:${JSON.stringify(id)}`;
}

/**
 * Why one stdout line is not a JSON-RPC 2.0 message (request, notification, or response with exactly one of
 * `result` / `error`), or `undefined` when it is one.
 */
export function wireProblem(line: Buffer): string | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(line);
  } catch {
    return 'not valid UTF-8';
  }
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return 'not a JSON object';
  const record = message as Message;
  if (record['jsonrpc'] !== '2.0') return '"jsonrpc" is not "2.0"';
  if (typeof record['method'] === 'string') return undefined;
  if (!('id' in record)) return 'neither a request, a notification nor a response';
  const id = record['id'];
  if (!(id === null || typeof id === 'string' || typeof id === 'number'))
    return 'response id is not a string, number or null';
  const hasResult = 'result' in record;
  const hasError = 'error' in record;
  if (hasResult === hasError) return 'a response needs exactly one of "result" and "error"';
  if (hasError) {
    const error = record['error'] as Message | null;
    if (
      typeof error !== 'object' ||
      error === null ||
      !Number.isInteger(error['code']) ||
      typeof error['message'] !== 'string'
    ) {
      return 'error is not { code: integer, message: string }';
    }
  }
  if (STACK_FRAME.test(text)) return 'carries a stack trace';
  return undefined;
}

/**
 * `env` that runs the server at its own default log level (`SKILLS_SERVE_LOG_LEVEL` left out), for tests of what it
 * logs unasked.
 */
export const SERVER_DEFAULT_LOG_LEVEL: Readonly<Record<string, undefined>> = { SKILLS_SERVE_LOG_LEVEL: undefined };

/** How to start the server. */
export interface WireOptions {
  /** CLI arguments (roots and flags). */
  readonly args: readonly string[];
  /**
   * Extra environment (PATH is passed; `SKILLS_SERVE_LOG_LEVEL` defaults to `info`). A variable set to `undefined` is
   * left out ({@link SERVER_DEFAULT_LOG_LEVEL}).
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * A command that execs the server: its words come first, then `node bin/skills-serve.js <args>`. The wrapper must
   * `exec` (setpriv, `sh -c '…; exec "$0" "$@"'`, unshare without --fork) so the child's pid is the server's.
   */
  readonly wrap?: readonly string[];
  /**
   * The CLI to run (default: the checkout's `bin/skills-serve.js`), with `cwd` its working directory: a server run
   * as another user needs a copy it can read (`readableInstall` in `dist.ts`).
   */
  readonly bin?: string;
  readonly cwd?: string;
  /**
   * An executable to run instead of `node <bin>`, with `args` as its whole argument list: e.g. an installed
   * `node_modules/.bin/skills-serve` (started through its shebang, as `npx` does). The directory of the Node running
   * the tests is put first on its PATH.
   */
  readonly command?: string;
  /** Keep every stdout line as text in {@link Wire.lines}, as it arrived, before any parsing (default: not). */
  readonly keepLines?: boolean;
}

/** Where {@link Wire.waitForLog} looks, and for how long. */
export interface LogWaitOptions {
  /** Only log lines after the first `after` count (a count taken earlier with `wire.logs().length`). */
  readonly after?: number;
  /** Give up after this long (ms); default {@link WAIT_MS}. */
  readonly timeoutMs?: number;
}

/** How the process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The state of a process in `/proc/<pid>/status`. */
export interface ProcStatus {
  /** `R`, `S`, `T` (stopped), `Z`…; `undefined` once gone. */
  readonly state: string | undefined;
  readonly rssKb: number;
  /** Peak resident set. */
  readonly hwmKb: number;
}

/** A server process seen through its stdio. */
export interface Wire {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Parsed stdout messages, in arrival order. */
  readonly messages: Message[];
  /** Stdout lines that are not JSON-RPC 2.0 messages, with the reason (an unterminated last line counts). */
  readonly badLines: string[];
  /** Every stdout line as text, with `keepLines` (else empty). */
  readonly lines: string[];
  /** Responses received for `id` (by {@link idKey}). */
  responses(id: unknown): Message[];
  stderr(this: void): string;
  /** The stderr lines that are JSON log records (pino), parsed, each once, as they arrive. */
  logs(): readonly LogLine[];
  /**
   * The first log line after `options.after` (already received or to come) matching `predicate`, as soon as it
   * arrives; rejects after `options.timeoutMs` or when the process exits first.
   */
  waitForLog(predicate: (line: LogLine) => boolean, options?: LogWaitOptions): Promise<LogLine>;
  /** Calls `listener` with every message from now on (for a client transport); returns the unsubscribe. */
  listen(listener: (message: Message) => void): () => void;
  /** Writes one message as a line. */
  send(message: unknown): void;
  /** Writes raw bytes, resolving once the pipe accepted them (backpressure respected). */
  write(bytes: string | Uint8Array): Promise<void>;
  /**
   * Sends a request with a fresh id (`w<n>` strings, so they never collide with a test's numeric ids); resolves with
   * its response.
   */
  request(method: string, params?: unknown, timeoutMs?: number): Promise<Message>;
  /** Fresh request id (see {@link Wire.request}). */
  nextId(): string;
  /**
   * The first message (already received or to come) matching `predicate`; rejects after `timeoutMs` or when the process
   * exits first.
   */
  waitFor(predicate: (message: Message) => boolean, timeoutMs?: number): Promise<Message>;
  /**
   * The 2025-11-25 handshake (`initialize` then `notifications/initialized`); resolves with the answer to `initialize`.
   */
  handshake(): Promise<Message>;
  /**
   * Resolves once the process has exited and its stdout and stderr are drained (the child's `close`), so a test that
   * awaits it sees every line.
   */
  readonly exit: Promise<Exit>;
  /** The exit, or a rejection naming `what` after `timeoutMs` (default {@link WAIT_MS}). */
  exited(timeoutMs?: number, what?: string): Promise<Exit>;
  running(): boolean;
  status(): ProcStatus;
  /** Open file descriptors (`/proc/<pid>/fd`), or NaN once gone. */
  fdCount(): number;
  /** Ends stdin, waits up to `timeoutMs` for the exit, then SIGKILLs. */
  stop(timeoutMs?: number): Promise<void>;
}

const started = new Set<Wire>();

/** Stops every server {@link spawnWire} started that still runs (for `afterEach`). */
export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((wire) => wire.stop()));
  started.clear();
}

/** Reads `/proc/<pid>/status`. */
export function procStatus(pid: number): ProcStatus {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string): number =>
      Number(new RegExp(`^${name}:\\s+(\\d+)`, 'mu').exec(text)?.[1] ?? Number.NaN);
    return { state: /^State:\s+(\S)/mu.exec(text)?.[1], rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
  } catch {
    return { state: undefined, rssKb: Number.NaN, hwmKb: Number.NaN };
  }
}

/** The `initialize` request of a 2025-era host. */
export function initializeRequest(id: number | string, protocolVersion = '2025-11-25'): Message {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-e2e', version: '1.0.0' } },
  };
}

/** A list that grows as the process speaks, with waiters for an item to come. */
class Feed<T> {
  readonly items: T[] = [];
  readonly #listeners = new Set<(item: T) => void>();

  /**
   * @param exit the process's exit: a wait still open then is rejected.
   * @param tail the end of stderr, for the errors.
   */
  constructor(
    private readonly exit: Promise<Exit>,
    private readonly tail: () => string,
  ) {}

  push(item: T): void {
    this.items.push(item);
    for (const listener of [...this.#listeners]) listener(item);
  }

  listen(listener: (item: T) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The first item from index `from` on matching `predicate`, as soon as it arrives. */
  waitFor(predicate: (item: T) => boolean, from: number, timeoutMs: number, what: string): Promise<T> {
    const earlier = this.items.slice(from).find(predicate);
    if (earlier !== undefined) return Promise.resolve(earlier);
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unlisten();
        outcome();
      };
      const unlisten = this.listen((item) => {
        if (predicate(item)) settle(() => resolve(item));
      });
      const timer = setTimeout(() => {
        settle(() => reject(new Error(`no matching ${what} within ${timeoutMs} ms; stderr tail:\n${this.tail()}`)));
      }, timeoutMs);
      void this.exit.then(({ code, signal }) => {
        const why = `the server exited (${code ?? signal}) before a matching ${what}; stderr tail:\n${this.tail()}`;
        settle(() => reject(new Error(why)));
      });
    });
  }
}

/**
 * Spawns the server with piped stdio: `node bin/skills-serve.js <args>` (another CLI with `options.bin`, an
 * executable with `options.command`), through `options.wrap` if given. The one way tests start a server process:
 * `connect` (`server.ts`) runs an SDK client over it, `startHttpServer` serves HTTP from it.
 *
 * @throws Error if the process cannot be spawned.
 */
export function spawnWire(options: WireOptions): Wire {
  const inherited = process.env['PATH'] ?? '';
  const serverWords =
    options.command === undefined
      ? [process.execPath, options.bin ?? BIN, ...options.args]
      : [options.command, ...options.args];
  const words = [...(options.wrap ?? []), ...serverWords];
  const child = spawn(words[0] as string, words.slice(1), {
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: {
      PATH:
        options.command === undefined ? inherited : [path.dirname(process.execPath), inherited].join(path.delimiter),
      SKILLS_SERVE_LOG_LEVEL: 'info',
      ...TEST_CACHE,
      ...options.env,
    },
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${words.join(' ')}`);
  // The host may write after the server stopped reading: the pending requests fail instead.
  child.stdin?.on('error', () => undefined);
  // 'close', not 'exit': it comes once stdout and stderr are drained too.
  const exit = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  let stderr = '';
  const tail = (): string => stderr.slice(-2000);
  const messages = new Feed<Message>(exit, tail);
  const logs = new Feed<LogLine>(exit, tail);
  const badLines: string[] = [];
  const lines: string[] = [];
  const byId = new Map<string, Message[]>();
  let parts: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      parts.push(chunk.subarray(start, newline));
      const line = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
      parts = [];
      start = newline + 1;
      if (options.keepLines === true) lines.push(line.toString('utf8'));
      const problem = wireProblem(line);
      if (problem !== undefined) {
        badLines.push(`${problem}: ${line.subarray(0, 200).toString('utf8')}`);
        continue;
      }
      const message = JSON.parse(line.toString('utf8')) as Message;
      if ('id' in message && typeof message['method'] !== 'string') {
        const key = idKey(message['id']);
        byId.set(key, [...(byId.get(key) ?? []), message]);
      }
      messages.push(message);
    }
    if (start < chunk.length) parts.push(chunk.subarray(start));
  });
  child.stdout?.on('end', () => {
    const rest = Buffer.concat(parts);
    if (rest.length === 0) return;
    if (options.keepLines === true) lines.push(rest.toString('utf8'));
    badLines.push(`unterminated last line: ${rest.subarray(0, 200).toString('utf8')}`);
  });
  // Decoded as a stream, so a UTF-8 sequence split across reads is kept whole; each log line is parsed once.
  child.stderr?.setEncoding('utf8');
  let parsed = 0;
  child.stderr?.on('data', (text: string) => {
    stderr += text;
    const end = stderr.lastIndexOf('\n') + 1;
    if (end <= parsed) return;
    const complete = stderr.slice(parsed, end);
    parsed = end;
    for (const line of logLines(complete)) logs.push(line);
  });
  let exitedYet = false;
  void exit.then(() => {
    exitedYet = true;
  });
  let counter = 0;
  const pid = child.pid;
  const waitFor = (predicate: (message: Message) => boolean, timeoutMs = WAIT_MS): Promise<Message> =>
    messages.waitFor(predicate, 0, timeoutMs, 'message');
  const wire: Wire = {
    child,
    pid,
    messages: messages.items,
    badLines,
    lines,
    responses: (id) => byId.get(idKey(id)) ?? [],
    stderr: () => stderr,
    logs: () => logs.items,
    waitForLog: (predicate, { after = 0, timeoutMs = WAIT_MS } = {}) =>
      logs.waitFor(predicate, after, timeoutMs, 'log line'),
    listen: (listener) => messages.listen(listener),
    send: (message) => {
      child.stdin?.write(`${JSON.stringify(message)}\n`);
    },
    write: (bytes) =>
      new Promise((resolve, reject) => {
        if (child.stdin === null || child.stdin.destroyed) {
          reject(new Error('stdin is closed'));
          return;
        }
        child.stdin.write(bytes, (error) => (error ? reject(error) : resolve()));
      }),
    nextId: () => `w${++counter}`,
    request: (method, params, timeoutMs = WAIT_MS) => {
      const id = wire.nextId();
      wire.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
      return waitFor((message) => message['id'] === id && typeof message['method'] !== 'string', timeoutMs);
    },
    waitFor,
    handshake: async () => {
      const id = wire.nextId();
      wire.send(initializeRequest(id));
      const answer = await waitFor((message) => message['id'] === id && typeof message['method'] !== 'string');
      wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      return answer;
    },
    exit,
    exited: (timeoutMs = WAIT_MS, what = 'the server to exit') =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`waited ${timeoutMs} ms for ${what}; stderr tail:\n${stderr.slice(-2000)}`)),
          timeoutMs,
        );
        void exit.then((result) => {
          clearTimeout(timer);
          resolve(result);
        });
      }),
    running: () => !exitedYet,
    status: () => procStatus(pid),
    fdCount: () => {
      try {
        return readdirSync(`/proc/${pid}/fd`).length;
      } catch {
        return Number.NaN;
      }
    },
    stop: async (timeoutMs = 5_000) => {
      started.delete(wire);
      if (exitedYet) return;
      // A stopped process cannot read its stdin's end; a paused stdout would never drain, and `exit` waits for it.
      child.kill('SIGCONT');
      child.stdout?.resume();
      child.stdin?.end();
      const outcome = await Promise.race([
        exit,
        new Promise((resolve) => setTimeout(() => resolve('timeout'), timeoutMs)),
      ]);
      if (outcome === 'timeout') {
        child.kill('SIGKILL');
        await exit;
      }
    },
  };
  started.add(wire);
  return wire;
}

/** The JSON-RPC error of a response, if it is one. */
export function errorOf(message: Message): { code: number; message: string } | undefined {
  return message['error'] as { code: number; message: string } | undefined;
}

/** The result of a response; throws with the error when it is an error response. */
export function resultOf<T = Record<string, unknown>>(message: Message): T {
  const error = errorOf(message);
  if (error !== undefined) throw new Error(`expected a result, got error ${error.code}: ${error.message}`);
  return message['result'] as T;
}

/** The bytes a `resources/read` result carries (text as UTF-8, or the decoded blob). */
export function bytesOfRead(message: Message): Buffer {
  const contents = resultOf<{ contents: { text?: string; blob?: string }[] }>(message).contents;
  const first = contents[0];
  if (first === undefined) throw new Error('resources/read returned no contents');
  if (typeof first.text === 'string') return Buffer.from(first.text, 'utf8');
  if (typeof first.blob === 'string') return Buffer.from(first.blob, 'base64');
  throw new Error('resources/read content has neither text nor blob');
}

/** Whether some line of `stderr` carries a V8 stack frame. */
export function hasStackTrace(stderr: string): boolean {
  // Raw frames, frames inside a JSON log line (newlines escaped), or a logged `stack` field.
  return STACK_FRAME.test(stderr) || /\\n\s+at /u.test(stderr) || /"stack":"/u.test(stderr);
}
