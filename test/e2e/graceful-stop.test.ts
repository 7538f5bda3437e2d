/**
 * Graceful stop: on SIGTERM or the end of stdin, stdio answers every request
 * it has read before it exits; on SIGTERM, HTTP finishes its in-flight requests, closes listen streams with a final
 * event, then exits. Both bounded: exit 0 within {@link STOP_BOUND_MS}.
 *
 * "Read" and "in flight" are made certain without timing. The requests reach the server while it is stopped (SIGSTOP):
 * written to its stdin, or the bodies of HTTP requests whose headers it has read (it answered `100 Continue`), seen
 * queued on its sockets in `/proc/net/tcp`. The stop (SIGTERM, sent while it is stopped, or stdin's end, which comes
 * after the requests in the stream) comes with SIGCONT. libuv runs signal watchers after the I/O callbacks of the
 * loop turn they share, so the server reads the requests and starts them before it handles the signal, and a read of
 * a file over 256 KiB (`SYNC_READ_MAX_BYTES`, read on the thread pool) cannot end within that turn. The server's stop
 * is bounded (5 s), so the work left in flight is kept small: six reads of 1 MiB. During the first build, the requests
 * go out in one write smaller than PIPE_BUF (atomic, so the server's read returns them together) after a `ping`, and
 * the signal is sent once that `ping` is answered.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { listAll } from '../helpers/converge.js';
import { sha256 } from '../helpers/disk.js';
import { waitFor } from '../helpers/live.js';
import { startHttpServer } from '../helpers/server.js';
import { makeTempDir, makeTree, removeTree, skillMd } from '../helpers/tree.js';
import {
  bytesOfRead,
  errorOf,
  hasStackTrace,
  type Message,
  procStatus,
  spawnWire,
  stopAll,
  type Wire,
} from '../helpers/wire.js';

/** How long a stop may take, in-flight work included (ms). */
const STOP_BOUND_MS = 20_000;
const PIPE_BUF = 4096;
const BLOB_URI = 'skill://big/blob.bin';

let root: string;
let blob: Buffer;
beforeAll(async () => {
  blob = randomBytes(1024 * 1024);
  root = await makeTree({
    'big/SKILL.md': skillMd('big', 'A skill with a large binary.'),
    'big/blob.bin': blob,
    'small/SKILL.md': skillMd('small', 'A small skill.'),
    'small/notes.md': 'small notes\n',
  });
});
afterEach(() => stopAll());
afterAll(() => removeTree(root));

/** One write of `ping` followed by `requests`; returns the ping's id and the requests' ids. */
async function sendTogether(
  wire: Wire,
  requests: readonly { method: string; params: unknown }[],
): Promise<{ pingId: string; ids: string[] }> {
  const pingId = wire.nextId();
  const ids: string[] = [];
  let text = `${JSON.stringify({ jsonrpc: '2.0', id: pingId, method: 'ping' })}\n`;
  for (const { method, params } of requests) {
    const id = wire.nextId();
    ids.push(id);
    text += `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
  }
  expect(Buffer.byteLength(text), 'the batch must fit in one atomic pipe write').toBeLessThanOrEqual(PIPE_BUF);
  await wire.write(text);
  return { pingId, ids };
}

/** Stops the server (SIGSTOP) and waits until it is stopped. */
async function pause(wire: Wire): Promise<void> {
  wire.child.kill('SIGSTOP');
  await waitFor(() => procStatus(wire.pid).state === 'T', { describe: () => 'the server did not stop' });
}

/**
 * Stops the server, writes `requests` to its stdin in one write, runs `stop`, then continues the server.
 *
 * @returns the requests' ids, and how many of them had been answered when `stop` ran.
 */
async function sendWhileStopped(
  wire: Wire,
  requests: readonly { method: string; params: unknown }[],
  stop: (wire: Wire) => Promise<void>,
): Promise<{ ids: string[]; answeredAtStop: number }> {
  await pause(wire);
  const ids = requests.map(() => wire.nextId());
  await wire.write(
    requests
      .map(({ method, params }, index) => `${JSON.stringify({ jsonrpc: '2.0', id: ids[index], method, params })}\n`)
      .join(''),
  );
  const answeredAtStop = ids.filter((id) => wire.responses(id).length > 0).length;
  await stop(wire);
  wire.child.kill('SIGCONT');
  return { ids, answeredAtStop };
}

const READS = [
  ...Array.from({ length: 6 }, () => ({ method: 'resources/read', params: { uri: BLOB_URI } })),
  ...Array.from({ length: 6 }, () => ({ method: 'skills/get', params: { uri: 'skill://small/SKILL.md' } })),
];

/** Every id answered exactly once with a result; the blob reads carry the blob. */
function expectAllServed(wire: Wire, ids: readonly string[]): void {
  const answers = ids.map((id) => wire.responses(id));
  expect(
    answers.map((list) => list.length),
    'answers per request',
  ).toEqual(ids.map(() => 1));
  for (const [index, [answer]] of answers.entries()) {
    expect(errorOf(answer as Message), `request ${index}`).toBeUndefined();
    if (index < 6) expect(sha256(bytesOfRead(answer as Message))).toBe(sha256(blob));
  }
}

describe('stdio', () => {
  it.each([
    ['SIGTERM', async (wire: Wire): Promise<void> => void wire.child.kill('SIGTERM')],
    // Resolves once the end is in the stream (shut down), behind the requests.
    ['stdin ending', (wire: Wire): Promise<void> => new Promise((resolve) => wire.child.stdin?.end(resolve))],
  ] as const)(
    'on %s, every request already read is answered, then exit 0',
    async (_label, stop) => {
      const wire = spawnWire({ args: ['--no-watch', root] });
      await wire.handshake();
      await listAll(wire);
      const { ids, answeredAtStop } = await sendWhileStopped(wire, READS, stop);
      const exit = await wire.exited(STOP_BOUND_MS, 'a graceful exit');
      // Precondition: all twelve reach the server while it is stopped, so none is answered when the stop comes.
      expect(answeredAtStop).toBe(0);
      expectAllServed(wire, ids);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(hasStackTrace(wire.stderr())).toBe(false);
      expect(wire.badLines).toEqual([]);
    },
    60_000,
  );

  it('on SIGTERM during the first build, the requests waiting for it are answered (result or error), then exit 0', async () => {
    const big = await makeTempDir();
    try {
      for (let index = 0; index < 2_000; index++) {
        const name = `s${String(index).padStart(4, '0')}`;
        mkdirSync(path.join(big, name));
        writeFileSync(path.join(big, name, 'SKILL.md'), skillMd(name, `Skill ${index}.`));
        writeFileSync(path.join(big, name, 'notes.md'), `notes ${index}\n`.repeat(20));
      }
      // --compat off: initialize does not wait for the catalog.
      const wire = spawnWire({ args: ['--no-watch', '--compat', 'off', big] });
      await wire.handshake();
      const { pingId, ids } = await sendTogether(
        wire,
        Array.from({ length: 8 }, (_, index) =>
          index % 2 === 0
            ? { method: 'skills/list', params: {} }
            : { method: 'skills/get', params: { uri: 'skill://s0001/SKILL.md' } },
        ),
      );
      await wire.waitFor((message) => message['id'] === pingId);
      wire.child.kill('SIGTERM');
      const exit = await wire.exited(STOP_BOUND_MS, 'a graceful exit');
      for (const id of ids) {
        const answers = wire.responses(id);
        expect(answers, `answers to ${id}`).toHaveLength(1);
        const error = errorOf(answers[0] as Message);
        if (error !== undefined) expect(error.message.length).toBeGreaterThan(0);
      }
      expect(exit).toEqual({ code: 0, signal: null });
      expect(wire.badLines).toEqual([]);
    } finally {
      await removeTree(big);
    }
  }, 60_000);
});

/** JSON-RPC messages in an SSE body (`data:` lines). */
function sseMessages(text: string): Message[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Message);
}

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/**
 * Bytes that arrived on the server's ends of its TCP connections on 127.0.0.1:`port` and that it has not read yet
 * (`rx_queue` of the established sockets in `/proc/net/tcp`).
 */
function unreadByServer(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let unread = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, address, , state, queues] = line.trim().split(/\s+/u);
    if (address === local && state === '01') unread += Number.parseInt(queues?.split(':')[1] ?? '', 16);
  }
  return unread;
}

/** A POST to `/mcp` sent as headers with `Expect: 100-continue`; its body goes when `sendBody` is called. */
interface HeldRequest {
  /** Resolves once the server answered `100 Continue`: it has read the headers, the request is its. */
  readonly continued: Promise<void>;
  readonly bodyBytes: number;
  /** Sends the body; resolves once it is handed to the kernel. */
  sendBody(): Promise<void>;
  readonly response: Promise<{ status: number | undefined; messages: Message[] }>;
}

function holdRequest(port: number, body: unknown): HeldRequest {
  const text = JSON.stringify(body);
  const request = http.request({
    host: '127.0.0.1',
    port,
    path: '/mcp',
    method: 'POST',
    agent: false,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(text),
      expect: '100-continue',
    },
  });
  const continued = new Promise<void>((resolve) => request.once('continue', () => resolve()));
  const response = new Promise<{ status: number | undefined; messages: Message[] }>((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (incoming) => {
      let received = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => {
        received += chunk;
      });
      incoming.once('error', reject);
      incoming.once('end', () => resolve({ status: incoming.statusCode, messages: sseMessages(received) }));
    });
  });
  request.flushHeaders();
  return {
    continued,
    bodyBytes: Buffer.byteLength(text),
    sendBody: () => new Promise((resolve) => request.end(text, resolve)),
    response,
  };
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  });
}

describe('HTTP', () => {
  it('on SIGTERM, in-flight requests complete, a listen stream gets its final event and ends, then exit 0', async () => {
    const { wire, url, port } = await startHttpServer([root]);
    // A 2026-07-28 listen stream, held open.
    const listen = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications: { resourcesListChanged: true }, _meta: MODERN_META },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    );
    expect(listen.status).toBe(200);
    const reader = (listen.body as ReadableStream<Uint8Array>).getReader();
    let streamText = '';
    let streamEnded = false;
    let streamError: unknown;
    const pump = (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        streamText += decoder.decode(value, { stream: true });
      }
      streamEnded = true;
    })().catch((error: unknown) => {
      streamError = error;
    });
    await waitFor(() => streamText.includes('notifications/subscriptions/acknowledged'));

    const held = Array.from({ length: 6 }, (_, index) =>
      holdRequest(port, { jsonrpc: '2.0', id: index + 1, method: 'resources/read', params: { uri: BLOB_URI } }),
    );
    await Promise.all(held.map((request) => request.continued));
    const reads = held.map((request) => request.response);
    let completed = 0;
    for (const read of reads)
      void read.then(
        () => completed++,
        () => undefined,
      );
    // The bodies reach the stopped server; SIGTERM waits behind them (see the head of this file).
    await pause(wire);
    await Promise.all(held.map((request) => request.sendBody()));
    const bodyBytes = held.reduce((sum, request) => sum + request.bodyBytes, 0);
    await waitFor(() => unreadByServer(port) === bodyBytes, {
      describe: () => `${unreadByServer(port)} bytes unread on the server's sockets, not the ${bodyBytes} sent`,
    });
    const inFlightAtStop = reads.length - completed;
    wire.child.kill('SIGTERM');
    wire.child.kill('SIGCONT');

    const results = await Promise.allSettled(reads);
    await pump;
    const exit = await wire.exited(STOP_BOUND_MS, 'a graceful exit');
    expect(inFlightAtStop, 'precondition: reads still in flight at SIGTERM').toBe(6);
    for (const [index, result] of results.entries()) {
      expect(result.status, `read ${index + 1}: ${result.status === 'rejected' ? String(result.reason) : ''}`).toBe(
        'fulfilled',
      );
      if (result.status !== 'fulfilled') continue;
      expect(result.value.status).toBe(200);
      const answer = result.value.messages.find((message) => message['id'] === index + 1) as Message;
      expect(sha256(bytesOfRead(answer))).toBe(sha256(blob));
    }
    expect(streamError, 'the listen stream was cut instead of ended').toBeUndefined();
    expect(streamEnded).toBe(true);
    const final = sseMessages(streamText).find((message) => message['id'] === 'listen-1');
    expect(final, `no final event on the listen stream:\n${streamText}`).toBeDefined();
    expect(errorOf(final as Message)).toBeUndefined();
    expect(exit).toEqual({ code: 0, signal: null });
  }, 60_000);
});
