/**
 * End-to-end harness: the built CLI (`bin/skills-serve.js`) over real stdio with the official v2 client connected in
 * a chosen protocol era and the host-side `SkillsClient` that verifies every read; and over HTTP. Both start the
 * process through the one spawner, `spawnWire` (`wire.ts`).
 */
import {
  Client,
  type ClientOptions,
  type JSONRPCMessage,
  ProtocolError,
  type Transport,
} from '@modelcontextprotocol/client';
import { type Skill, SKILLS_EXTENSION_ID, SkillsClient } from '@modelcontextprotocol/client/ext/skills';

import { isEvent } from './logs.js';
import { waitFor } from './wait.js';
import { SERVER_DEFAULT_LOG_LEVEL, spawnWire, type Wire, type WireOptions } from './wire.js';

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
  /** The server process, every message and log line it sent. */
  readonly wire: Wire;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Every skill listed (every page), verified by `SkillsClient`. */
  list(): Promise<Skill[]>;
  close(): Promise<void>;
}

/** How {@link connect} starts the server (see `spawnWire`) and what its client declares. */
export interface ConnectOptions extends Omit<WireOptions, 'args' | 'wrap' | 'bin'> {
  /**
   * Declare the Skills extension in the client's capabilities (`extensions["io.modelcontextprotocol/skills"]`), as a
   * host that implements it does. Default `false`: a host without the extension.
   */
  readonly skillsExtension?: boolean;
}

/** The client options that make a host speak `era`: its version negotiation, and the versions it supports if pinned. */
export function eraClientOptions(era: Era): ClientOptions {
  return {
    versionNegotiation: era.negotiation,
    ...(era.versions === undefined ? {} : { supportedProtocolVersions: [...era.versions] }),
  };
}

/**
 * What a host passes the server it starts besides PATH, as the SDK's stdio transport does (git roots need `HOME`).
 */
const HOST_ENV = Object.fromEntries(
  ['HOME', 'LOGNAME', 'SHELL', 'TERM', 'USER'].flatMap((name) => {
    const value = process.env[name];
    return value === undefined ? [] : [[name, value]];
  }),
);

/**
 * An SDK client transport over a {@link Wire}: messages as the wire parsed them (a line that is not JSON-RPC stays in
 * `wire.badLines`), closing ends stdin. It negotiates an era in place, on the one process, as a host's own transport
 * does (the SDK's stdio transport would probe on a second, short-lived copy of the server).
 */
class WireTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /** Read by the SDK to tell a stdio transport (`pid` and `stderr`) from an HTTP one. */
  readonly stderr = null;

  constructor(private readonly wire: Wire) {}

  get pid(): number {
    return this.wire.pid;
  }

  async start(): Promise<void> {
    for (const message of this.wire.messages) this.onmessage?.(message as JSONRPCMessage);
    this.wire.listen((message) => this.onmessage?.(message as JSONRPCMessage));
    void this.wire.exit.then(() => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.wire.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    await this.wire.stop();
  }
}

/**
 * Spawns `skills-serve <args>` and connects a client in `era`.
 *
 * @param args CLI arguments (roots and flags).
 * @param era which protocol era to negotiate (default 2025-11-25).
 * @param options how to start the server (see `spawnWire`; a host's HOME and user are passed), and whether the client
 *   declares the Skills extension (default: it does not).
 */
export async function connect(
  args: readonly string[],
  era: Era = ERAS[1],
  options: ConnectOptions = {},
): Promise<Connection> {
  const { skillsExtension, ...spawnOptions } = options;
  const wire = spawnWire({ ...spawnOptions, args, env: { ...HOST_ENV, ...options.env } });
  const client = new Client(
    { name: 'skills-serve-e2e', version: '1.0.0' },
    {
      ...eraClientOptions(era),
      ...(skillsExtension === true ? { capabilities: { extensions: { [SKILLS_EXTENSION_ID]: {} } } } : {}),
    },
  );
  await client.connect(new WireTransport(wire));
  const skills = new SkillsClient(client);
  return {
    client,
    skills,
    wire,
    stderr: wire.stderr,
    list: async () => (await skills.list()).skills,
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

/** A `skills-serve --http` process listening on a free port of 127.0.0.1. */
export interface HttpServer {
  readonly url: string;
  readonly port: number;
  /** The process (signals, exit, every log line). */
  readonly wire: Wire;
  stderr(this: void): string;
  stop(): Promise<number | string>;
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
    const serving = await wire.waitForLog((line) => isEvent(line, 'serving', { transport: 'http' }), {
      timeoutMs: 20_000,
    });
    port = typeof serving['port'] === 'number' ? serving['port'] : undefined;
    await wire.waitForLog((line) => isEvent(line, 'index-built'), { timeoutMs: 20_000 });
  } catch (error) {
    wire.child.kill('SIGKILL');
    throw error;
  }
  if (port === undefined) throw new Error(`the HTTP server logged no port:\n${wire.stderr()}`);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    wire,
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
