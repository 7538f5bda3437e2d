/**
 * The one raw server process of the tests: a byte-exact view of the stdio wire, for tests of the wire itself, the
 * process around it (exit codes, signals, stderr) and faults. Spawns the built CLI (optionally through a wrapper
 * command such as `setpriv`, `sh -c 'ulimit …; exec …'` or `unshare`, or another copy of the CLI), splits stdout into
 * lines as bytes (so a UTF-8 sequence split across pipe reads is never mangled), keeps every message and every line
 * that is not a JSON-RPC 2.0 message, and counts responses per id so that "answered exactly once" can be asserted.
 * A host with an SDK client is `connect` in `server.ts`.
 *
 * Every wait is bounded; {@link stopAll} ends whatever a test file started (stdin end, then SIGKILL by pid).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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
   * as another user needs a copy it can read (`readableInstall` in `faults.ts`).
   */
  readonly bin?: string;
  readonly cwd?: string;
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
  /** Stdout lines that are not JSON-RPC 2.0 messages, with the reason. */
  readonly badLines: string[];
  /** Responses received for `id` (by {@link idKey}). */
  responses(id: unknown): Message[];
  stderr(this: void): string;
  /** The stderr lines that are JSON log records (pino), parsed. */
  logs(): LogLine[];
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
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The exit, or a rejection naming `what` after `timeoutMs` (default {@link WAIT_MS}). */
  exited(timeoutMs?: number, what?: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
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

/**
 * Spawns `node bin/skills-serve.js <args>` (through `options.wrap` if given) with piped stdio.
 *
 * @throws Error if the process cannot be spawned.
 */
export function spawnWire(options: WireOptions): Wire {
  const serverWords = [process.execPath, options.bin ?? BIN, ...options.args];
  const words = [...(options.wrap ?? []), ...serverWords];
  const child = spawn(words[0] as string, words.slice(1), {
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { PATH: process.env['PATH'] ?? '', SKILLS_SERVE_LOG_LEVEL: 'info', ...TEST_CACHE, ...options.env },
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${words.join(' ')}`);
  // The host may write after the server stopped reading: the pending requests fail instead.
  child.stdin?.on('error', () => undefined);
  const messages: Message[] = [];
  const badLines: string[] = [];
  const byId = new Map<string, Message[]>();
  const waiters = new Set<(message: Message) => void>();
  let stderr = '';
  let parts: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      parts.push(chunk.subarray(start, newline));
      const line = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
      parts = [];
      start = newline + 1;
      const problem = wireProblem(line);
      if (problem !== undefined) {
        badLines.push(`${problem}: ${line.subarray(0, 200).toString('utf8')}`);
        continue;
      }
      const message = JSON.parse(line.toString('utf8')) as Message;
      messages.push(message);
      if ('id' in message && typeof message['method'] !== 'string') {
        const key = idKey(message['id']);
        byId.set(key, [...(byId.get(key) ?? []), message]);
      }
      for (const waiter of [...waiters]) waiter(message);
    }
    if (start < chunk.length) parts.push(chunk.subarray(start));
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // 'close', not 'exit': it comes once stdout and stderr are drained too.
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  let exitedYet = false;
  void exit.then(() => {
    exitedYet = true;
  });
  let counter = 0;
  const pid = child.pid;
  const waitFor = (predicate: (message: Message) => boolean, timeoutMs = WAIT_MS): Promise<Message> => {
    const earlier = messages.find(predicate);
    if (earlier !== undefined) return Promise.resolve(earlier);
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(waiter);
      };
      const waiter = (message: Message): void => {
        if (!predicate(message)) return;
        done();
        resolve(message);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching message within ${timeoutMs} ms; stderr tail:\n${stderr.slice(-2000)}`));
      }, timeoutMs);
      waiters.add(waiter);
      void exit.then(({ code, signal }) => {
        if (!waiters.has(waiter)) return;
        done();
        reject(
          new Error(
            `the server exited (${code ?? signal}) before a matching message; stderr tail:\n${stderr.slice(-2000)}`,
          ),
        );
      });
    });
  };
  const wire: Wire = {
    child,
    pid,
    messages,
    badLines,
    responses: (id) => byId.get(idKey(id)) ?? [],
    stderr: () => stderr,
    logs: () => logLines(stderr),
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
