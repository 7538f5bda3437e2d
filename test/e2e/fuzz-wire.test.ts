/**
 * Property-based fuzzing of both transports: generated methods, params,
 * ids, batches, malformed messages and Unicode (lone surrogates included), sent to one long-lived server per
 * transport. Properties: the server never crashes; stdout carries nothing but JSON-RPC 2.0 messages (stdio) or
 * nothing at all (HTTP); every request is answered exactly once, matched by id; a line or body that cannot be
 * identified gets exactly one error with id null.
 *
 * Seeded and bounded for CI (FUZZ_RUNS cases per transport; `SKILLS_SERVE_FUZZ_RUNS` and `SKILLS_SERVE_FUZZ_SEED`
 * override). Left out on purpose: `subscriptions/listen` (a long-lived request, answered only when it ends) and
 * `notifications/cancelled` (a cancelled request is rightly never answered).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitFor } from '../helpers/live.js';
import { startHttpServer } from '../helpers/server.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';
import { idKey, type Message, spawnWire, stopAll, type Wire, wireProblem } from '../helpers/wire.js';

const FUZZ_RUNS = Number(process.env['SKILLS_SERVE_FUZZ_RUNS'] ?? 200);
const FUZZ_SEED = Number(process.env['SKILLS_SERVE_FUZZ_SEED'] ?? 20_261_130);

type Id = string | number;
type Params = Record<string, unknown> | undefined;

/** One generated stdio line (or HTTP body) and what it calls for. */
type Unit =
  | { readonly kind: 'request'; readonly id: Id; readonly method: string; readonly params: Params }
  | { readonly kind: 'notification'; readonly method: string; readonly params: Params }
  /** Wrong shape, usable id: one error, with that id or null. */
  | { readonly kind: 'malformed'; readonly id: Id; readonly message: Record<string, unknown> }
  /** Not identifiable (not JSON, not an object, unusable id): one error with id null. */
  | { readonly kind: 'garbage'; readonly text: string }
  | { readonly kind: 'batch'; readonly requests: readonly { id: Id; method: string; params: Params }[] }
  /** JSON whitespace only: nothing. */
  | { readonly kind: 'blank'; readonly text: string };

const KNOWN_METHODS = [
  'ping',
  'initialize',
  'skills/list',
  'skills/get',
  'resources/read',
  'resources/directory/read',
  'resources/list',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'server/discover',
  'notifications/initialized',
  'notifications/roots/list_changed',
];
const EXCLUDED_METHODS = new Set(['subscriptions/listen', 'notifications/cancelled']);
const URIS = [
  'skill://alpha/SKILL.md',
  'skill://alpha/notes.md',
  'skill://alpha',
  'skill://alpha/refs',
  'skill://beta/data.bin',
  'skill://nope/SKILL.md',
];

/** Strings with every kind of code point, lone surrogates included. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({
    unit: fc.constantFrom('\ud800', '\udfff', '\u0000', '\u2028', '\ufeff', 'é', '😀', '/', '%', '.'),
    maxLength: 12,
  }),
);
const method = fc
  .oneof({ weight: 4, arbitrary: fc.constantFrom(...KNOWN_METHODS) }, { weight: 1, arbitrary: text })
  .filter((name) => !EXCLUDED_METHODS.has(name));
const uri = fc.oneof(
  fc.constantFrom(...URIS),
  text.map((tail) => `skill://alpha/${tail}`),
  text.map((tail) => `skill://${tail}`),
  text,
);
const params: fc.Arbitrary<Params> = fc.oneof(
  fc.constant(undefined),
  fc.record(
    {
      uri,
      cursor: fc.oneof(text, fc.base64String({ maxLength: 40 })),
      name: text,
      level: fc.constantFrom('debug', 'info', 'error', 'nope'),
      arguments: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    },
    { requiredKeys: [] },
  ),
  fc.dictionary(text, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
  fc.record(
    { _meta: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }), uri },
    { requiredKeys: ['_meta'] },
  ),
);
const id: fc.Arbitrary<Id> = fc.oneof(
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
  fc.integer({ min: -5, max: 5 }),
  text,
);

const defect: fc.Arbitrary<(message: Record<string, unknown>) => Record<string, unknown>> = fc.oneof(
  fc
    .constantFrom('1.0', 2, null)
    .map((value) => (message: Record<string, unknown>) => ({ ...message, jsonrpc: value })),
  fc.constant((message: Record<string, unknown>) => {
    const { jsonrpc: _dropped, ...rest } = message;
    return rest;
  }),
  fc
    .oneof(fc.integer(), fc.constant(null), fc.constant({ name: 'ping' }))
    .map((value) => (message: Record<string, unknown>) => ({ ...message, method: value })),
  fc
    .oneof(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 2 }), text, fc.integer(), fc.constant(null))
    .map((value) => (message: Record<string, unknown>) => ({ ...message, params: value })),
  fc
    .oneof(text, fc.integer(), fc.array(fc.integer(), { maxLength: 2 }))
    .map((value) => (message: Record<string, unknown>) => ({ ...message, params: { _meta: value } })),
);
/** Ids a JSON-RPC peer cannot answer by: fractions, booleans, objects, arrays, null. */
const unusableId = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Number.isInteger(value)),
  fc.boolean(),
  fc.constant(null),
  fc.dictionary(text, fc.integer(), { maxKeys: 1 }),
  fc.array(fc.integer(), { maxLength: 2 }),
);
/** Text that is not a JSON-RPC message at all: not JSON, or a JSON scalar. Never contains a newline. */
const garbageText = fc
  .oneof(
    text,
    fc.jsonValue({ maxDepth: 0 }).map((value) => JSON.stringify(value)),
    fc.constantFrom(
      '{',
      '}',
      '{"jsonrpc":"2.0","id":',
      '[]',
      'null',
      '""',
      '{"jsonrpc":"2.0","id":1,"method":"ping"',
      '\u00a0',
      '\ufeff{}',
    ),
  )
  .map((line) => line.replaceAll('\n', ' '))
  .filter((line) => {
    if (/^[ \t\r]*$/u.test(line)) return false;
    try {
      const value: unknown = JSON.parse(line);
      return typeof value !== 'object' || value === null || (Array.isArray(value) && value.length === 0);
    } catch {
      return true;
    }
  });

const unit: fc.Arbitrary<Unit> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('request' as const), id, method, params }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('notification' as const), method, params }) },
  {
    weight: 2,
    arbitrary: fc.tuple(id, method, params, defect).map(([requestId, name, given, damage]) => ({
      kind: 'malformed' as const,
      id: requestId,
      message: damage({
        jsonrpc: '2.0',
        id: requestId,
        method: name,
        ...(given === undefined ? {} : { params: given }),
      }),
    })),
  },
  {
    weight: 1,
    // A fractional id is a JSON-RPC number that MCP forbids: answered with id null, or echoed (it is a number).
    arbitrary: fc.tuple(unusableId, method).map(([badId, name]): Unit => {
      const message = { jsonrpc: '2.0', id: badId, method: name };
      return typeof badId === 'number'
        ? { kind: 'malformed', id: badId, message }
        : { kind: 'garbage', text: JSON.stringify(message) };
    }),
  },
  { weight: 2, arbitrary: garbageText.map((line) => ({ kind: 'garbage' as const, text: line })) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.record({ id, method, params }), { minLength: 1, maxLength: 4 })
      .map((requests) => ({ kind: 'batch' as const, requests })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(' ', '\t', ' \t ', '\r').map((blank) => ({ kind: 'blank' as const, text: blank })),
  },
);

/** Makes the ids of one case unique (deterministically), so that answers can be matched to requests. */
function uniqueIds(units: readonly Unit[]): Unit[] {
  const used = new Set<string>();
  const fresh = (given: Id): Id => {
    let value = given;
    while (used.has(idKey(value)))
      value = typeof value === 'string' ? `${value}#` : value < Number.MAX_SAFE_INTEGER ? value + 1 : value - 1;
    used.add(idKey(value));
    return value;
  };
  return units.map((item) => {
    if (item.kind === 'request') return { ...item, id: fresh(item.id) };
    if (item.kind === 'malformed') {
      const unique = fresh(item.id);
      return { ...item, id: unique, message: { ...item.message, id: unique } };
    }
    if (item.kind === 'batch')
      return { ...item, requests: item.requests.map((request) => ({ ...request, id: fresh(request.id) })) };
    return item;
  });
}

function serialize(item: Unit): string {
  const message = (requestId: Id | undefined, name: string, given: Params): Record<string, unknown> => ({
    jsonrpc: '2.0',
    ...(requestId === undefined ? {} : { id: requestId }),
    method: name,
    ...(given === undefined ? {} : { params: given }),
  });
  switch (item.kind) {
    case 'request':
      return JSON.stringify(message(item.id, item.method, item.params));
    case 'notification':
      return JSON.stringify(message(undefined, item.method, item.params));
    case 'malformed':
      return JSON.stringify(item.message);
    case 'batch':
      return JSON.stringify(item.requests.map((request) => message(request.id, request.method, request.params)));
    case 'garbage':
    case 'blank':
      return item.text;
  }
}

/**
 * Checks what one case was answered with: `answers` are the responses that arrived for it (id-null ones included).
 *
 * @returns the problems, or `[]`; `pending` when answers may still be on their way.
 */
function judgeCase(units: readonly Unit[], answers: readonly Message[]): { problems: string[]; pending: boolean } {
  const byKey = new Map<string, Message[]>();
  for (const answer of answers) byKey.set(idKey(answer['id']), [...(byKey.get(idKey(answer['id'])) ?? []), answer]);
  const count = (requestId: Id): number => byKey.get(idKey(requestId))?.length ?? 0;
  const problems: string[] = [];
  let pending = false;
  let nullExpected = 0;
  const known = new Set<string>(['null']);
  for (const item of units) {
    if (item.kind === 'request') {
      known.add(idKey(item.id));
      if (count(item.id) === 0) pending = true;
      if (count(item.id) > 1)
        problems.push(`request ${JSON.stringify(item.id)} (${item.method}) answered ${count(item.id)} times`);
    } else if (item.kind === 'malformed') {
      known.add(idKey(item.id));
      if (count(item.id) > 1) problems.push(`malformed ${JSON.stringify(item.id)} answered ${count(item.id)} times`);
      if (count(item.id) === 1 && byKey.get(idKey(item.id))?.[0]?.['error'] === undefined)
        problems.push(`malformed ${JSON.stringify(item.message)} got a result`);
      if (count(item.id) === 0) nullExpected++;
    } else if (item.kind === 'garbage') {
      nullExpected++;
    } else if (item.kind === 'batch') {
      for (const request of item.requests) known.add(idKey(request.id));
      const answered = item.requests.filter((request) => count(request.id) > 0).length;
      if (answered === 0) nullExpected++;
      else if (answered < item.requests.length) pending = true;
      for (const request of item.requests)
        if (count(request.id) > 1)
          problems.push(`batch element ${JSON.stringify(request.id)} answered ${count(request.id)} times`);
    }
  }
  const nulls = byKey.get('null') ?? [];
  if (nulls.length < nullExpected) pending = true;
  if (nulls.length > nullExpected)
    problems.push(
      `${nulls.length} id-null errors for ${nullExpected} unidentifiable lines: ${JSON.stringify(nulls).slice(0, 300)}`,
    );
  for (const answer of nulls)
    if (answer['error'] === undefined)
      problems.push(`an id-null response that is not an error: ${JSON.stringify(answer).slice(0, 200)}`);
  for (const key of byKey.keys())
    if (!known.has(key)) problems.push(`a response for an id never sent in this case: ${key}`);
  return { problems, pending };
}

let root: string;
beforeAll(async () => {
  root = await makeTree({
    'alpha/SKILL.md': skillMd('alpha', 'First skill.'),
    'alpha/notes.md': 'notes\n',
    'alpha/refs/guide.md': '# guide\n',
    'beta/SKILL.md': skillMd('beta', 'Second skill.'),
    'beta/data.bin': Uint8Array.from([0, 159, 146, 150, 255]),
  });
});
afterAll(async () => {
  await stopAll();
  await removeTree(root);
});

describe('fuzzing stdio', () => {
  it(`${FUZZ_RUNS} generated cases of 1–8 lines: no crash, only JSON-RPC on stdout, every request answered exactly once`, async () => {
    const wire: Wire = spawnWire({ args: ['--no-watch', root] });
    await wire.handshake();
    let barrier = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(unit, { minLength: 1, maxLength: 8 }), async (generated) => {
        const units = uniqueIds(generated);
        const from = wire.messages.length;
        await wire.write(`${units.map(serialize).join('\n')}\n`);
        // A ping after the case: once it is answered, every line before it has been read.
        const barrierId = `\u0000barrier-${++barrier}`;
        wire.send({ jsonrpc: '2.0', id: barrierId, method: 'ping' });
        await wire.waitFor((message) => message['id'] === barrierId);
        const answersNow = (): Message[] =>
          wire.messages
            .slice(from)
            .filter(
              (message) => 'id' in message && typeof message['method'] !== 'string' && message['id'] !== barrierId,
            );
        let verdict = judgeCase(units, answersNow());
        await waitFor(() => !(verdict = judgeCase(units, answersNow())).pending || verdict.problems.length > 0, {
          describe: () => `unanswered; answers so far ${JSON.stringify(answersNow()).slice(0, 500)}`,
        }).catch(() => undefined);
        expect(wire.running(), `the server exited; stderr:\n${wire.stderr().slice(-2000)}`).toBe(true);
        expect(wire.badLines).toEqual([]);
        expect(verdict.problems).toEqual([]);
        expect(verdict.pending, `not every line was answered: ${JSON.stringify(answersNow()).slice(0, 500)}`).toBe(
          false,
        );
      }),
      { seed: FUZZ_SEED, numRuns: FUZZ_RUNS, interruptAfterTimeLimit: 60_000 },
    );
    wire.child.stdin?.end();
    expect(await wire.exited()).toEqual({ code: 0, signal: null });
  }, 120_000);
});

/** Parses an HTTP response body into JSON-RPC messages; returns the problems with the body's shape. */
function httpMessages(contentType: string, body: string): { messages: Message[]; problems: string[] } {
  const problems: string[] = [];
  const messages: Message[] = [];
  const take = (json: string): void => {
    const problem = wireProblem(Buffer.from(json));
    if (problem !== undefined) {
      // A JSON array of responses (batch answer) is allowed as a whole body.
      try {
        const value: unknown = JSON.parse(json);
        if (Array.isArray(value)) {
          for (const element of value) take(JSON.stringify(element));
          return;
        }
      } catch {
        // fall through
      }
      problems.push(`${problem}: ${json.slice(0, 200)}`);
      return;
    }
    messages.push(JSON.parse(json) as Message);
  };
  if (body === '') return { messages, problems };
  if (contentType.includes('text/event-stream')) {
    for (const line of body.split('\n')) if (line.startsWith('data: ')) take(line.slice('data: '.length));
  } else take(body);
  return { messages, problems };
}

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** How a generated HTTP request presents itself: its era headers. */
const httpEra = fc.constantFrom('none', '2025-11-25', '2024-11-05', '2026-07-28', 'bogus');

describe('fuzzing HTTP', () => {
  it(`${FUZZ_RUNS} generated POST bodies: never a 5xx, nothing on stdout, every request answered exactly once, alive throughout`, async () => {
    const { wire, url, port } = await startHttpServer(['--no-watch', root]);
    await fc.assert(
      fc.asyncProperty(
        unit.filter((item) => item.kind !== 'blank'),
        httpEra,
        async (generated, era) => {
          let [item] = uniqueIds([generated]) as [Unit];
          const headers: Record<string, string> = {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          };
          if (era !== 'none') headers['mcp-protocol-version'] = era;
          if (era === '2026-07-28' && item.kind === 'request') {
            // A well-formed 2026-07-28 request: the envelope and the method header.
            item = { ...item, params: { ...(item.params ?? {}), _meta: MODERN_META } };
            if (/^[\x21-\x7e]+$/u.test(item.method)) headers['mcp-method'] = item.method;
          }
          const response = await fetch(url, { method: 'POST', body: serialize(item), headers });
          const body = await response.text();
          expect(
            response.status,
            `HTTP ${response.status} for ${serialize(item).slice(0, 300)}: ${body.slice(0, 300)}`,
          ).toBeLessThan(500);
          const { messages, problems } = httpMessages(response.headers.get('content-type') ?? '', body);
          expect(problems).toEqual([]);
          const answers = messages.filter((message) => 'id' in message && typeof message['method'] !== 'string');
          if (item.kind === 'notification') {
            expect(answers.filter((answer) => answer['id'] !== null)).toEqual([]);
          } else if (item.kind === 'request') {
            // One answer; id null only when the request was refused as a whole (4xx).
            expect(answers, body.slice(0, 300)).toHaveLength(1);
            const answeredId = (answers[0] as Message)['id'];
            if (answeredId === null) expect(response.status).toBeGreaterThanOrEqual(400);
            else expect(idKey(answeredId)).toBe(idKey(item.id));
          } else if (item.kind === 'batch') {
            const each = item.requests.map(
              (request) => answers.filter((answer) => idKey(answer['id']) === idKey(request.id)).length,
            );
            const refusedWhole =
              answers.length === 1 && response.status >= 400 && (answers[0] as Message)['error'] !== undefined;
            expect(
              refusedWhole || each.every((count) => count === 1),
              `batch answers ${JSON.stringify(answers).slice(0, 300)}`,
            ).toBe(true);
          } else {
            expect(answers, body.slice(0, 300)).toHaveLength(1);
            expect((answers[0] as Message)['error']).toBeDefined();
            if (item.kind === 'malformed')
              expect([idKey(null), idKey(item.id)]).toContain(idKey((answers[0] as Message)['id']));
            else expect((answers[0] as Message)['id']).toBeNull();
          }
          const health = await fetch(`http://127.0.0.1:${port}/healthz`);
          expect(health.status).toBe(200);
          await health.text();
        },
      ),
      { seed: FUZZ_SEED, numRuns: FUZZ_RUNS, interruptAfterTimeLimit: 60_000 },
    );
    // The HTTP server writes nothing at all to stdout.
    expect(wire.messages).toEqual([]);
    expect(wire.badLines).toEqual([]);
    wire.child.kill('SIGTERM');
    expect(await wire.exited()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
