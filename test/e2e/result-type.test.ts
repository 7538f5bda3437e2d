/**
 * `resultType: "complete"` on every `skills/list` and `skills/get` result, in both eras, over real stdio and HTTP
 * (the HTTP fast path of stateless 2025-era POSTs and the SDK's path alike): Microsoft Agent Framework's
 * `McpListedSkillsLoader` requires the string "complete" on a `skills/list` result whatever the era, and throws
 * otherwise (docs/hosts/agent-framework.md). Results are checked key by key, in order, as the bytes arrive.
 */
import http from 'node:http';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { type HttpServer, SAMPLE_SKILLS, startHttpServer } from '../helpers/server.js';
import { type Message, spawnWire, stopAll, type Wire } from '../helpers/wire.js';

const BILLING = 'skill://acme/billing/refunds/SKILL.md';
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/skills': {} } },
};

/** What a result's keys are, in order, per era: 2026-07-28 results carry the cache hint and the server's identity. */
const KEYS = {
  legacy: {
    first: ['skills', 'nextCursor', 'resultType'],
    last: ['skills', 'resultType'],
    get: ['skill', 'resultType'],
  },
  modern: {
    first: ['skills', 'nextCursor', 'ttlMs', 'cacheScope', 'resultType', '_meta'],
    last: ['skills', 'ttlMs', 'cacheScope', 'resultType', '_meta'],
    get: ['skill', 'ttlMs', 'cacheScope', 'resultType', '_meta'],
  },
} as const;

/** Asks for page 1, every further page and one skill; checks each result's keys and `resultType`. */
async function expectComplete(
  ask: (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>,
  keys: (typeof KEYS)[keyof typeof KEYS],
): Promise<void> {
  let page = await ask('skills/list', {});
  expect(Object.keys(page)).toEqual(keys.first);
  expect(page['resultType']).toBe('complete');
  let pages = 1;
  while (typeof page['nextCursor'] === 'string') {
    page = await ask('skills/list', { cursor: page['nextCursor'] });
    expect(page['resultType']).toBe('complete');
    pages++;
  }
  expect(Object.keys(page)).toEqual(keys.last);
  expect(pages).toBe(3);
  const got = await ask('skills/get', { uri: BILLING });
  expect(Object.keys(got)).toEqual(keys.get);
  expect(got['resultType']).toBe('complete');
  expect((got['skill'] as { uri: string }).uri).toBe(BILLING);
}

describe('stdio', () => {
  let wire: Wire;
  afterEach(stopAll);

  /** The result of one request, failing on an error answer. */
  const resultOf = (message: Message): Record<string, unknown> => {
    expect(message['error']).toBeUndefined();
    return message['result'] as Record<string, unknown>;
  };

  it.each(['2024-11-05', '2025-11-25'])(
    '%s: skills/list and skills/get results say resultType "complete"',
    async (version) => {
      wire = spawnWire({ args: [SAMPLE_SKILLS, '--page-size', '2'] });
      wire.send({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'result-type', version: '1.0.0' } },
      });
      const initialized = await wire.waitFor((message) => message['id'] === 0);
      expect((initialized['result'] as { protocolVersion: string }).protocolVersion).toBe(version);
      wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await expectComplete(async (method, params) => resultOf(await wire.request(method, params)), KEYS.legacy);
    },
  );

  it('2026-07-28: the same, beside the cache hint', async () => {
    wire = spawnWire({ args: [SAMPLE_SKILLS, '--page-size', '2'] });
    await expectComplete(
      async (method, params) => resultOf(await wire.request(method, { ...params, _meta: MODERN_META })),
      KEYS.modern,
    );
  });
});

describe('HTTP', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttpServer([SAMPLE_SKILLS, '--page-size', '2']);
  });
  afterAll(async () => {
    await server.stop();
  });

  /**
   * POSTs one request and returns its result, the last SSE message of the answer. `chunked` sends the body without
   * `content-length`, which the server hands to the SDK unread; with it, the body is read first (to count the request
   * under its method) and handed on as read.
   */
  function post(version: string, chunked: boolean) {
    let id = 0;
    return (method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        const modern = version === '2026-07-28';
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method,
          params: modern ? { ...params, _meta: MODERN_META } : params,
        });
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': version,
          ...(modern ? { 'mcp-method': method } : {}),
          ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(Buffer.byteLength(body)) }),
        };
        const req = http.request(
          { host: '127.0.0.1', port: server.port, path: '/mcp', method: 'POST', headers },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              try {
                expect(res.statusCode).toBe(200);
                const text = Buffer.concat(chunks).toString('utf8');
                // An SSE stream (its last message is the answer) or one JSON body.
                const data = text.split('\n').filter((line) => line.startsWith('data: '));
                const message = JSON.parse(
                  String(res.headers['content-type']).startsWith('text/event-stream')
                    ? (data.at(-1) ?? '').slice('data: '.length)
                    : text,
                ) as Message;
                expect(message['error']).toBeUndefined();
                resolve(message['result'] as Record<string, unknown>);
              } catch (error) {
                reject(error instanceof Error ? error : new Error(String(error)));
              }
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      });
  }

  it.each([
    ['2025-11-25, body read first', '2025-11-25', false],
    ['2025-11-25, body streamed', '2025-11-25', true],
    ['2025-06-18, body read first', '2025-06-18', false],
  ] as const)('%s: skills/list and skills/get results say resultType "complete"', async (_label, version, chunked) => {
    await expectComplete(post(version, chunked), KEYS.legacy);
  });

  it('2026-07-28: the same, beside the cache hint', async () => {
    await expectComplete(post('2026-07-28', false), KEYS.modern);
  });
});
