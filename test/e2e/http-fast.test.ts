/**
 * The HTTP fast path answers exactly what the SDK's stateless path answers. Each request is sent twice to the same
 * server: with `content-length` (the fast path takes the four read methods) and with `transfer-encoding: chunked`
 * (it never does: the SDK answers). Status, headers (but `date`) and body must be byte-identical, for successes,
 * every error answer (which the fast path hands over) and requests it must not take.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf } from '../helpers/logs.js';
import { SAMPLE_SKILLS, startHttpServer, type HttpServer } from '../helpers/server.js';

interface Answer {
  readonly status: number | undefined;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function post(
  port: number,
  body: string,
  chunked: boolean,
  extraHeaders: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...extraHeaders,
      ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(Buffer.byteLength(body)) }),
    };
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const { date: _date, ...rest } = res.headers;
        resolve({ status: res.statusCode, headers: rest, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    // Chunked: the body in two pieces, so that nothing can tell the two ways apart but the framing.
    if (chunked) {
      req.write(body.slice(0, 5));
      req.end(body.slice(5));
    } else req.end(body);
  });
}

const REQUESTS: readonly [string, unknown][] = [
  ['skills/list', { jsonrpc: '2.0', id: 1, method: 'skills/list', params: {} }],
  ['skills/list, no params', { jsonrpc: '2.0', id: 'a', method: 'skills/list' }],
  [
    'skills/list, page 2',
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'skills/list',
      params: { cursor: 'YWZ0ZXI6c2tpbGw6Ly9kYXRhLXBpcGVsaW5lL1NLSUxMLm1k' },
    },
  ],
  ['skills/list, bad cursor', { jsonrpc: '2.0', id: 3, method: 'skills/list', params: { cursor: 'nope' } }],
  [
    'skills/get',
    { jsonrpc: '2.0', id: 4, method: 'skills/get', params: { uri: 'skill://acme/billing/refunds/SKILL.md' } },
  ],
  ['skills/get, unknown', { jsonrpc: '2.0', id: 5, method: 'skills/get', params: { uri: 'skill://nope/SKILL.md' } }],
  ['skills/get, uri not a string', { jsonrpc: '2.0', id: 6, method: 'skills/get', params: { uri: 42 } }],
  [
    'resources/read, text',
    {
      jsonrpc: '2.0',
      id: 7,
      method: 'resources/read',
      params: { uri: 'skill://report-writer/references/style-guide.md' },
    },
  ],
  [
    'resources/read, blob',
    { jsonrpc: '2.0', id: 8, method: 'resources/read', params: { uri: 'skill://report-writer/assets/logo.png' } },
  ],
  [
    'resources/read, a directory',
    { jsonrpc: '2.0', id: 9, method: 'resources/read', params: { uri: 'skill://report-writer/assets' } },
  ],
  [
    'resources/read, dot segments',
    { jsonrpc: '2.0', id: 10, method: 'resources/read', params: { uri: 'skill://report-writer/assets/../SKILL.md' } },
  ],
  [
    'resources/directory/read',
    { jsonrpc: '2.0', id: 11, method: 'resources/directory/read', params: { uri: 'skill://report-writer' } },
  ],
  [
    'resources/directory/read, a file',
    { jsonrpc: '2.0', id: 12, method: 'resources/directory/read', params: { uri: 'skill://report-writer/SKILL.md' } },
  ],
  [
    'with _meta',
    {
      jsonrpc: '2.0',
      id: 13,
      method: 'skills/get',
      params: { uri: 'skill://pdf-summaries/SKILL.md', _meta: { progressToken: 1 } },
    },
  ],
  ['tools/list (not a fast method)', { jsonrpc: '2.0', id: 14, method: 'tools/list', params: {} }],
  ['a batch', [{ jsonrpc: '2.0', id: 15, method: 'skills/list', params: {} }]],
  ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }],
];

describe('the HTTP fast path', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttpServer(['--page-size', '2', SAMPLE_SKILLS]);
  });
  afterAll(async () => {
    await server.stop().catch(() => undefined);
  });

  it.each(REQUESTS)('%s: the same status, headers and bytes as the SDK path', async (_label, request) => {
    const body = JSON.stringify(request);
    const fast = await post(server.port, body, false);
    const sdk = await post(server.port, body, true);
    expect(fast).toEqual(sdk);
  });

  it('took the fast path for the content-length sends of the successful read requests, and only for those', async () => {
    const code = await server.stop();
    expect(code).toBe(0);
    const stopped = eventsOf(server.stderr(), 'http-stopped');
    // Two sends per row; the fast path answers skills/list (2), its second page, skills/get, the two reads and the
    // directory read: 7 rows, each once (the chunked send of every row goes the SDK's way).
    expect(stopped).toEqual([expect.objectContaining({ requests: REQUESTS.length * 2, fastAnswers: 7 })]);
  });
});
