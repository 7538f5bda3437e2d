/**
 * End-to-end harness: spawns the built CLI (`bin/skills-serve.js`) over real stdio and connects the official v2
 * client in a chosen protocol era, with the host-side `SkillsClient` that verifies every read.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';

import { Client, type ClientOptions, ProtocolError } from '@modelcontextprotocol/client';
import { SKILLS_EXTENSION_ID, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { eventsOf, type LogLine, logLines } from './logs.js';
import { BIN, TEST_CACHE } from './paths.js';
import { waitFor } from './wait.js';

export { BIN, FIXTURES, REPO, SAMPLE_SKILLS, TEST_CACHE } from './paths.js';

/** The protocol eras a host may speak: two 2025-era revisions through `initialize`, and 2026-07-28. */
export const ERAS = [
  { label: '2024-11-05', negotiation: { mode: 'legacy' as const }, versions: ['2024-11-05'] },
  { label: '2025-11-25', negotiation: { mode: 'legacy' as const }, versions: undefined },
  { label: '2026-07-28', negotiation: { mode: { pin: '2026-07-28' } }, versions: undefined },
] as const;
export type Era = (typeof ERAS)[number];

/** A connected client and the server process behind it. */
export interface Connection {
  readonly client: Client;
  readonly skills: SkillsClient;
  readonly transport: StdioClientTransport;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Which server to start (default: `node bin/skills-serve.js` of this checkout). */
export interface SpawnOptions {
  /**
   * An executable to run instead, with `args` as its whole argument list: e.g. an installed
   * `node_modules/.bin/skills-serve` (started through its shebang, as `npx` does), or `process.execPath` with a
   * script path first. The directory of the Node running the tests is put first on its PATH.
   */
  readonly command?: string;
  /** The server's working directory (default: the test's). */
  readonly cwd?: string;
}

/** How {@link connect} starts the server and what its client declares. */
export interface ConnectOptions extends SpawnOptions {
  /**
   * Declare the Skills extension in the client's capabilities (`extensions["io.modelcontextprotocol/skills"]`), as a
   * host that implements it does. Default `false`: a host without the extension.
   */
  readonly skillsExtension?: boolean;
  /** Extra environment variables for the server (`{ SKILLS_SERVE_INSTRUCTIONS_MAX: '2000' }`). */
  readonly env?: Record<string, string>;
}

/** The client options that make a host speak `era`: its version negotiation, and the versions it supports if pinned. */
export function eraClientOptions(era: Era): ClientOptions {
  return {
    versionNegotiation: era.negotiation,
    ...(era.versions === undefined ? {} : { supportedProtocolVersions: [...era.versions] }),
  };
}

/** The command, arguments and PATH that start the server for `options`. */
function serverCommand(
  args: readonly string[],
  options: SpawnOptions,
): { command: string; args: string[]; path: string } {
  const inherited = process.env['PATH'] ?? '';
  if (options.command === undefined) return { command: process.execPath, args: [BIN, ...args], path: inherited };
  return {
    command: options.command,
    args: [...args],
    path: [path.dirname(process.execPath), inherited].join(path.delimiter),
  };
}

/**
 * Spawns `skills-serve <args>` and connects a client in `era`.
 *
 * @param args CLI arguments (roots and flags).
 * @param era which protocol era to negotiate (default 2025-11-25).
 * @param options another server command (default: this checkout's `bin/skills-serve.js`), and whether the client
 *   declares the Skills extension (default: it does not).
 */
export async function connect(
  args: readonly string[],
  era: Era = ERAS[1],
  options: ConnectOptions = {},
): Promise<Connection> {
  const server = serverCommand(args, options);
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    stderr: 'pipe',
    env: { PATH: server.path, SKILLS_SERVE_LOG_LEVEL: 'info', ...TEST_CACHE, ...options.env },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  let stderr = '';
  (transport.stderr as Readable | null)?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client(
    { name: 'skills-serve-e2e', version: '1.0.0' },
    {
      ...eraClientOptions(era),
      ...(options.skillsExtension === true ? { capabilities: { extensions: { [SKILLS_EXTENSION_ID]: {} } } } : {}),
    },
  );
  await client.connect(transport);
  return {
    client,
    skills: new SkillsClient(client),
    transport,
    stderr: () => stderr,
    close: () => client.close(),
  };
}

/** A raw server process, for tests of the wire itself (stdout lines, exit codes, signals). */
export interface RawServer {
  readonly child: ChildProcess;
  /** Complete stdout lines so far. */
  readonly lines: string[];
  stderr(this: void): string;
  /** The stderr lines that are JSON log records (pino), parsed. */
  logs(): LogLine[];
  send(message: unknown): void;
  /**
   * Resolves with the first parsed stdout message (already received or still to come) matching `predicate`; rejects
   * after `timeoutMs`.
   */
  waitFor(
    predicate: (message: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name) once the process exited and its stdout and stderr are drained. */
  exited(): Promise<number | string>;
}

/**
 * Spawns `skills-serve <args>` with piped stdio and no client.
 *
 * @param args CLI arguments.
 * @param env extra environment variables.
 * @param options another server command (default: this checkout's `bin/skills-serve.js`).
 */
export function spawnRaw(
  args: readonly string[],
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): RawServer {
  const server = serverCommand(args, options);
  const child = spawn(server.command, server.args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: server.path, ...TEST_CACHE, ...env },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  const lines: string[] = [];
  const received: Record<string, unknown>[] = [];
  const waiters: {
    predicate: (m: Record<string, unknown>) => boolean;
    resolve: (m: Record<string, unknown>) => void;
  }[] = [];
  let partial = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    let newline: number;
    while ((newline = partial.indexOf('\n')) !== -1) {
      const line = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      lines.push(line);
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      received.push(message);
      for (const waiter of [...waiters]) {
        if (waiter.predicate(message)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // 'close', not 'exit': it comes once stdout and stderr are drained too, so a test that awaits the exit sees every
  // line.
  const exit = new Promise<number | string>((resolve) => {
    child.on('close', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  return {
    child,
    lines,
    stderr: () => stderr,
    logs: () => logLines(stderr),
    send: (message) => child.stdin?.write(`${JSON.stringify(message)}\n`),
    waitFor: (predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const earlier = received.find(predicate);
        if (earlier !== undefined) {
          resolve(earlier);
          return;
        }
        const timer = setTimeout(
          () => reject(new Error(`no matching message within ${timeoutMs} ms; stderr:\n${stderr}`)),
          timeoutMs,
        );
        waiters.push({
          predicate,
          resolve: (message) => {
            clearTimeout(timer);
            resolve(message);
          },
        });
      }),
    exited: () => exit,
  };
}

/** The `initialize` request of a 2025-era host. */
export function initializeRequest(id: number, protocolVersion = '2025-11-25'): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-e2e', version: '1.0.0' } },
  };
}

/**
 * The 2025-era handshake on a raw server: sends `initialize` (id 1), waits for its answer, then sends
 * `notifications/initialized`.
 *
 * @returns the answer to `initialize`.
 */
export async function handshake(server: RawServer): Promise<Record<string, unknown>> {
  server.send(initializeRequest(1));
  const answer = await server.waitFor((message) => message['id'] === 1);
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return answer;
}

/** The JSON-RPC error code a request fails with (throws if it succeeds or fails otherwise). */
export async function errorCodeOf(request: Promise<unknown>): Promise<number> {
  try {
    await request;
  } catch (error) {
    if (error instanceof ProtocolError) return error.code;
    throw error;
  }
  throw new Error('expected the request to fail');
}

/**
 * A Standard Schema that accepts any result unchanged: lets a test send raw requests for methods the client has
 * no built-in schema for (`skills/list` pages, `resources/directory/read`) and inspect exactly what came back.
 */
export const ANY_RESULT = {
  '~standard': { version: 1, vendor: 'skills-serve-tests', validate: (value: unknown) => ({ value }) },
} as const;

/** Sends a raw request and returns the result as a plain record. */
export async function rawRequest(
  connection: Connection,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return (await connection.client.request({ method, params }, ANY_RESULT)) as Record<string, unknown>;
}

/** A `skills-serve --http` process listening on a free port. */
export interface HttpServer {
  readonly url: string;
  readonly port: number;
  stderr(this: void): string;
  stop(): Promise<number | string>;
}

/** The port an HTTP server logged in its `serving` event, if it logged one yet. */
export function servingPort(stderr: string): number | undefined {
  const port = eventsOf(stderr, 'serving', { transport: 'http' })[0]?.['port'];
  return typeof port === 'number' ? port : undefined;
}

/**
 * Starts `skills-serve --http 0 <args>` and resolves once it listens (its `serving` event names the port) and the
 * first index build is served (its `index-built` event).
 *
 * @param args further CLI arguments (roots, flags).
 * @param env extra environment variables.
 * @throws Error with the server's stderr when it exits first or does not get there within 20 s (it is killed then).
 */
export async function startHttpServer(args: readonly string[], env: Record<string, string> = {}): Promise<HttpServer> {
  const raw = spawnRaw(['--http', '0', ...args], env);
  let exitCode: number | string | undefined;
  void raw.exited().then((code) => {
    exitCode = code;
  });
  let port: number | undefined;
  try {
    await waitFor(
      () =>
        exitCode !== undefined ||
        ((port = servingPort(raw.stderr())) !== undefined && eventsOf(raw.stderr(), 'index-built').length > 0),
      {
        timeoutMs: 20_000,
        describe: () => `the HTTP server logged no serving port and index-built event:\n${raw.stderr()}`,
      },
    );
  } catch (error) {
    raw.child.kill('SIGKILL');
    throw error;
  }
  if (exitCode !== undefined || port === undefined) throw new Error(`HTTP server exited ${exitCode}:\n${raw.stderr()}`);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    stderr: raw.stderr,
    stop: () => {
      raw.child.kill('SIGTERM');
      return raw.exited();
    },
  };
}

/** An open `subscriptions/listen` stream over HTTP: what has arrived so far, and whether the server ended it. */
export interface ListenStream {
  readonly stream: { text: string; ended: boolean };
  /** Ends the stream from the client's side. */
  readonly cancel: () => Promise<void>;
}

/**
 * Opens a 2026-07-28 `subscriptions/listen` stream (resources list changes) with `Authorization: Bearer <token>` and
 * waits for its acknowledgement.
 *
 * @param url the server's `/mcp` URL.
 * @param id the request id.
 */
export async function openListenStream(url: string, token: string, id: string): Promise<ListenStream> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: {
        notifications: { resourcesListChanged: true },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  if (response.status !== 200) throw new Error(`subscriptions/listen answered ${response.status}`);
  const stream = { text: '', ended: false };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  void (async () => {
    const decoder = new TextDecoder();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      stream.text += decoder.decode(chunk.value, { stream: true });
    stream.ended = true;
  })().catch(() => {
    stream.ended = true;
  });
  await waitFor(() => stream.text.includes('notifications/subscriptions/acknowledged'));
  return { stream, cancel: () => reader.cancel() };
}
