/**
 * End-to-end harness: spawns the built CLI (`bin/skills-serve.js`) over real stdio and connects the official v2
 * client in a chosen protocol era, with the host-side `SkillsClient` that verifies every read.
 */
import path from 'node:path';
import type { Readable } from 'node:stream';

import { Client, type ClientOptions, ProtocolError } from '@modelcontextprotocol/client';
import { SKILLS_EXTENSION_ID, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { eventsOf } from './logs.js';
import { BIN, TEST_CACHE } from './paths.js';
import { waitFor } from './wait.js';
import { SERVER_DEFAULT_LOG_LEVEL, spawnWire } from './wire.js';

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
  const wire = spawnWire({ args: ['--http', '0', ...args], env: { ...SERVER_DEFAULT_LOG_LEVEL, ...env } });
  let port: number | undefined;
  try {
    await waitFor(
      () =>
        !wire.running() ||
        ((port = servingPort(wire.stderr())) !== undefined && eventsOf(wire.stderr(), 'index-built').length > 0),
      {
        timeoutMs: 20_000,
        describe: () => `the HTTP server logged no serving port and index-built event:\n${wire.stderr()}`,
      },
    );
  } catch (error) {
    wire.child.kill('SIGKILL');
    throw error;
  }
  if (!wire.running() || port === undefined) {
    const { code, signal } = await wire.exited();
    throw new Error(`HTTP server exited ${code ?? signal}:\n${wire.stderr()}`);
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    stderr: wire.stderr,
    stop: async () => {
      wire.child.kill('SIGTERM');
      const { code, signal } = await wire.exited();
      return code ?? signal ?? 'unknown';
    },
  };
}

/** An open `subscriptions/listen` stream over HTTP: what has arrived so far, and whether the server ended it. */
export interface ListenStream {
  /** What it sent so far, whether it ended, and whether it ended cleanly (its last chunk, not a cut connection). */
  readonly stream: { text: string; ended: boolean; clean: boolean };
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
  const stream = { text: '', ended: false, clean: false };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  void (async () => {
    const decoder = new TextDecoder();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      stream.text += decoder.decode(chunk.value, { stream: true });
    stream.clean = true;
    stream.ended = true;
  })().catch(() => {
    stream.ended = true;
  });
  await waitFor(() => stream.text.includes('notifications/subscriptions/acknowledged'));
  return { stream, cancel: () => reader.cancel() };
}
