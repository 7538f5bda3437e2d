/**
 * The HTTP fast path answers exactly what the SDK's stateless path answers. Each request is sent twice to the same
 * server: with `content-length` (the fast path takes the four read methods) and with `transfer-encoding: chunked`
 * (it never does: the SDK answers). Status, headers (but `date`) and body must be byte-identical, for successes,
 * every error answer (which the fast path hands over) and requests it must not take.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventsOf } from '../helpers/logs.js';
import { type HttpServer, SAMPLE_SKILLS, startHttpServer } from '../helpers/server.js';
import { addToTree, makeTempDir, removeTree, skillMd } from '../helpers/tree.js';

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

/** The SSE events of an answer, parsed (`event: message` frames). */
function sseMessages(body: string): unknown[] {
  return body
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      expect(frame.startsWith('event: message\ndata: ')).toBe(true);
      return JSON.parse(frame.slice('event: message\ndata: '.length)) as unknown;
    });
}

describe('diagnostics over stateless HTTP, with the first skills/list page', () => {
  const TEAM_A = 'team-a-token-0123456789';
  const TEAM_B = 'team-b-token-0123456789';
  let dir: string;
  let server: HttpServer;
  const missingDescription = {
    severity: 'error',
    rule: 'required-fields',
    file: '<root 1>/team-a/broken/SKILL.md',
    message: 'SKILL.md frontmatter must contain string "name" and "description"',
    hint: 'add "name:" (the directory name) and "description:" (what the skill does and when to use it) as strings',
  };
  const unclosed = {
    severity: 'error',
    rule: 'frontmatter-unclosed',
    file: '<root 1>/team-b/open/SKILL.md',
    message: 'SKILL.md frontmatter: frontmatter has no closing "---" line',
    hint: 'end the frontmatter with a line holding only "---"',
  };
  const asNotification = (data: unknown): unknown => ({
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: { level: 'warning', data, logger: 'skills-serve' },
  });

  beforeAll(async () => {
    dir = await makeTempDir();
    const root = path.join(dir, 'skills');
    await addToTree(root, {
      'team-a/good/SKILL.md': skillMd('good', 'A good skill.'),
      'team-a/broken/SKILL.md': '---\nname: broken\n---\nNo description.\n',
      'team-b/fine/SKILL.md': skillMd('fine', 'Another good skill.'),
      'team-b/open/SKILL.md': '---\nname: open\ndescription: Never closed.\n',
    });
    const tokens = path.join(dir, 'tokens.json');
    writeFileSync(
      tokens,
      JSON.stringify({
        tokens: [
          { name: 'a', token: TEAM_A, prefixes: ['team-a'] },
          { name: 'b', token: TEAM_B, prefixes: ['team-b'] },
        ],
      }),
    );
    server = await startHttpServer([
      '--page-size',
      '1',
      '--http-token',
      'all-seeing-token-0123',
      '--http-tokens',
      tokens,
      root,
    ]);
  });
  afterAll(async () => {
    await server.stop().catch(() => undefined);
    await removeTree(dir);
  });

  const list = (token: string, params: unknown, chunked = false): Promise<Answer> =>
    post(server.port, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'skills/list', params }), chunked, {
      authorization: `Bearer ${token}`,
    });

  it('sends every diagnostic before the first page, the same bytes on the fast and the SDK path', async () => {
    const fast = await list('all-seeing-token-0123', {});
    expect(fast).toEqual(await list('all-seeing-token-0123', {}, true));
    const messages = sseMessages(fast.body);
    expect(messages.slice(0, 2)).toEqual([asNotification(missingDescription), asNotification(unclosed)]);
    expect(messages.slice(2).map((message) => Object.keys(message as object))).toEqual([['result', 'jsonrpc', 'id']]);
  });

  it('sends none with the later pages', async () => {
    const first = sseMessages((await list('all-seeing-token-0123', {})).body).at(-1) as {
      result: { nextCursor: string };
    };
    const second = sseMessages((await list('all-seeing-token-0123', { cursor: first.result.nextCursor })).body);
    expect(second.map((message) => Object.keys(message as object))).toEqual([['result', 'jsonrpc', 'id']]);
  });

  it('tells a team only about the files it may see', async () => {
    const a = sseMessages((await list(TEAM_A, {})).body);
    expect(a.slice(0, -1)).toEqual([asNotification(missingDescription)]);
    const b = await list(TEAM_B, {});
    expect(b).toEqual(await list(TEAM_B, {}, true));
    expect(sseMessages(b.body).slice(0, -1)).toEqual([asNotification(unclosed)]);
  });

  it('2026-07-28: only to a request that asks for a log level in its _meta', async () => {
    const modern = (meta: Record<string, unknown>): Promise<Answer> =>
      post(
        server.port,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'skills/list',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/skills': {} } },
              ...meta,
            },
          },
        }),
        false,
        {
          authorization: `Bearer ${TEAM_A}`,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'skills/list',
        },
      );
    const silent = await modern({});
    expect(silent.body).not.toContain('notifications/message');
    const asked = sseMessages((await modern({ 'io.modelcontextprotocol/logLevel': 'warning' })).body);
    expect(asked.slice(0, -1)).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'warning', data: missingDescription, logger: 'skills-serve' },
      },
    ]);
  });
});
