/**
 * Robustness of the stdio server against hostile or broken input and a changing disk.
 *
 * Everything here talks raw JSON lines to `bin/skills-serve.js` (spawnWire), in the 2025-11-25 era. After every
 * hostile step the server must still answer `ping`, every stdout line must be a JSON-RPC 2.0 message, stdout must
 * never carry a stack trace, and a hostile input gets exactly its JSON-RPC error and a `rejected` event on stderr
 * (an operator must be able to see why a host's request went nowhere).
 */
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { converge, listAll } from '../helpers/converge.js';
import { eventsOf, waitForEvent } from '../helpers/logs.js';
import { addToTree, skillMd, tempTrees } from '../helpers/tree.js';
import { errorOf, type Message, spawnWire, STACK_FRAME, stopAll, type Wire } from '../helpers/wire.js';

interface RpcError {
  readonly code: number;
  readonly message: string;
}

/** A raw session: spawned, initialized (2025-11-25), with helpers for requests and wire checks. */
interface Session {
  readonly server: Wire;
  /** Sends a request with a fresh numeric id; resolves with the response (rejects after `timeoutMs`). */
  call(method: string, params?: unknown, timeoutMs?: number): Promise<Message>;
  /** Sends one raw line (no JSON encoding). */
  sendLine(line: string | Uint8Array): void;
  /** Fresh request id. */
  id(): number;
  /** `ping` answers with an empty result. */
  expectAlive(): Promise<void>;
  /** Every stdout line so far is a JSON-RPC 2.0 message, none carries a stack trace. */
  expectWireClean(): void;
}

const temps = tempTrees();

afterEach(stopAll);
afterAll(() => temps.removeAll());

async function startSession(args: readonly string[]): Promise<Session> {
  const server = spawnWire({ args });
  let nextId = 1000;
  const session: Session = {
    server,
    id: () => nextId++,
    sendLine: (line) => {
      server.child.stdin?.write(line);
      server.child.stdin?.write('\n');
    },
    call: async (method, params, timeoutMs = 15_000) => {
      const id = nextId++;
      server.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
      return server.waitFor((message) => message['id'] === id, timeoutMs);
    },
    expectAlive: async () => {
      const response = await session.call('ping', undefined, 10_000);
      expect(response['result']).toEqual({});
    },
    // A line that is not a JSON-RPC 2.0 message, or carries a stack trace, is kept apart with the reason.
    expectWireClean: () => expect(server.badLines).toEqual([]),
  };
  await server.handshake();
  return session;
}

async function smallTree(): Promise<string> {
  return temps.tree({
    'alpha/SKILL.md': skillMd('alpha', 'First skill.'),
    'alpha/notes.txt': 'alpha notes\n',
    'alpha/refs/guide.md': '# guide\n',
    'beta/SKILL.md': skillMd('beta', 'Second skill.'),
    'beta/data.txt': 'beta data\n',
  });
}

/** One hostile line and exactly what the server must do with it. */
interface Rejection {
  readonly line: string | Uint8Array;
  /** The error of the `id: null` response it gets. */
  readonly error: RpcError;
  /** The `line` field of its `rejected` log event (the line as received, decoded as UTF-8). */
  readonly logged: string;
}

/**
 * Sends each hostile line, then a ping, and checks what came back: exactly one response, `id: null` with
 * `rejection.error`, before the ping's answer; and exactly one `rejected` warning on stderr with its code, `id: null`
 * and the line. Lines are handled in order, so by the time the ping is answered the rejection has been sent and
 * logged (stderr is a separate pipe: its line is awaited, then counted).
 */
async function expectRejected(session: Session, rejections: readonly Rejection[]): Promise<void> {
  for (const { line, error, logged } of rejections) {
    const label = typeof line === 'string' ? JSON.stringify(line) : `<bytes ${Buffer.from(line).toString('hex')}>`;
    const messagesBefore = session.server.messages.length;
    const logsBefore = session.server.logs().length;
    session.sendLine(line);
    await session.expectAlive();
    const answers = session.server.messages.slice(messagesBefore);
    expect(answers.slice(0, -1), label).toEqual([{ jsonrpc: '2.0', id: null, error }]);
    await waitForEvent(session.server.stderr, 'rejected', {}, { after: logsBefore });
    expect(eventsOf(session.server.logs().slice(logsBefore), 'rejected'), label).toMatchObject([
      { level: 40, code: error.code, id: null, line: logged },
    ]);
  }
}

const NOT_JSON: RpcError = { code: -32700, message: 'Parse error: the line is not JSON' };
const NOT_AN_OBJECT: RpcError = { code: -32600, message: 'Invalid Request: a message must be a JSON object' };
const NO_BATCHES: RpcError = { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported' };
const BAD_VERSION: RpcError = { code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0"' };

describe('hostile JSON lines', () => {
  it('answers malformed JSON with -32700 (id null), logs a rejected event, and keeps serving', async () => {
    const session = await startSession([await smallTree()]);
    const notJson = (line: string): Rejection => ({ line, error: NOT_JSON, logged: line });
    await expectRejected(session, [
      notJson('{not json'),
      notJson('{"jsonrpc":"2.0","id":'),
      notJson('}'),
      notJson('{"jsonrpc":"2.0","id":7,"method":"ping"'),
      { line: Buffer.from([0xff, 0xfe, 0x7b, 0x22]), error: NOT_JSON, logged: '\ufffd\ufffd{"' },
      notJson('\u0000'),
    ]);
    // Blank lines are not errors: no answer, no log line.
    const messagesBefore = session.server.messages.length;
    const logsBefore = session.server.logs().length;
    session.sendLine('');
    session.sendLine('   ');
    await session.expectAlive();
    expect(session.server.messages.length).toBe(messagesBefore + 1); // only the ping's answer
    // No line about them. (An `index-updated` may land meanwhile: the tree was written just before the start, inside
    // the watch window's 2 s ctime slack, docs/ARCHITECTURE.md "Watching"; it is not about the wire.)
    expect(
      session.server
        .logs()
        .slice(logsBefore)
        .filter((line) => line['event'] !== 'index-updated'),
    ).toEqual([]);
    session.expectWireClean();
  });

  it('rejects non-object JSON values and JSON-RPC batches with -32600 (id null), logged, and keeps serving', async () => {
    const session = await startSession([await smallTree()]);
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: session.id(), method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]);
    await expectRejected(session, [
      { line: 'null', error: NOT_AN_OBJECT, logged: 'null' },
      { line: '42', error: NOT_AN_OBJECT, logged: '42' },
      { line: '"skills/list"', error: NOT_AN_OBJECT, logged: '"skills/list"' },
      { line: 'true', error: NOT_AN_OBJECT, logged: 'true' },
      { line: '{}', error: BAD_VERSION, logged: '{}' },
      { line: '[]', error: NO_BATCHES, logged: '[]' },
      // A batch is refused whole: not even its ping is answered under its own id.
      { line: batch, error: NO_BATCHES, logged: batch },
    ]);
    session.expectWireClean();
  });

  it('answers every request that carries a usable id exactly once, with -32600 naming what is wrong, logged', async () => {
    const session = await startSession([await smallTree()]);
    const paramsNotObject: RpcError = { code: -32600, message: 'Invalid Request: "params" must be an object' };
    const OFF_SCHEMA: RpcError = {
      code: -32600,
      message: 'Invalid Request: the message does not match the JSON-RPC 2.0 schema',
    };
    const cases: { label: string; message: Message; error: RpcError }[] = [
      {
        label: 'params is a string',
        message: { jsonrpc: '2.0', method: 'resources/read', params: 'skill://alpha/SKILL.md' },
        error: paramsNotObject,
      },
      {
        label: 'params is an array',
        message: { jsonrpc: '2.0', method: 'resources/read', params: ['skill://alpha/SKILL.md'] },
        error: paramsNotObject,
      },
      {
        label: 'params is null',
        message: { jsonrpc: '2.0', method: 'skills/list', params: null },
        error: paramsNotObject,
      },
      {
        label: 'params is a number',
        message: { jsonrpc: '2.0', method: 'skills/get', params: 42 },
        error: paramsNotObject,
      },
      {
        label: '_meta is a string',
        message: { jsonrpc: '2.0', method: 'resources/read', params: { uri: 'skill://alpha/SKILL.md', _meta: 'x' } },
        error: { code: -32600, message: 'Invalid Request: "params._meta" must be an object' },
      },
      {
        label: 'method is a number',
        message: { jsonrpc: '2.0', method: 42 },
        error: { code: -32600, message: 'Invalid Request: "method" must be a string' },
      },
      { label: 'jsonrpc is "1.0"', message: { jsonrpc: '1.0', method: 'ping' }, error: BAD_VERSION },
      { label: 'jsonrpc is missing', message: { method: 'ping' }, error: BAD_VERSION },
      // Shapes only the SDK's schema refuses (before, the SDK dropped them and the host waited forever).
      { label: 'an unknown top-level key', message: { jsonrpc: '2.0', method: 'ping', extra: 1 }, error: OFF_SCHEMA },
      {
        label: 'a progressToken that is not a string or an integer',
        message: { jsonrpc: '2.0', method: 'ping', params: { _meta: { progressToken: 1.5 } } },
        error: OFF_SCHEMA,
      },
    ];
    for (const { label, message, error } of cases) {
      const id = session.id();
      const messagesBefore = session.server.messages.length;
      const logsBefore = session.server.logs().length;
      session.server.send({ ...message, id });
      // Lines are handled in order: once the ping after it is answered, so is the case (a host waits for every
      // request it sent; an unanswered one hangs it until its own timeout).
      await session.expectAlive();
      const answers = session.server.messages.slice(messagesBefore);
      expect(answers.slice(0, -1), label).toEqual([{ jsonrpc: '2.0', id, error }]);
      await waitForEvent(session.server.stderr, 'rejected', {}, { after: logsBefore });
      expect(eventsOf(session.server.logs().slice(logsBefore), 'rejected'), label).toMatchObject([
        { level: 40, code: -32600, id },
      ]);
    }
    session.expectWireClean();
  });

  it('answers wrong param types with -32602 (not -32603), on every method that takes them', async () => {
    const session = await startSession([await smallTree()]);
    const cases: [string, Message][] = [
      ['resources/read', { uri: 42 }],
      ['resources/read', { uri: null }],
      ['resources/read', { uri: { href: 'skill://alpha/SKILL.md' } }],
      ['resources/read', {}],
      ['skills/get', { uri: 42 }],
      ['skills/get', {}],
      ['resources/directory/read', { uri: ['skill://alpha'] }],
      ['resources/directory/read', { uri: 'skill://alpha', cursor: {} }],
      ['skills/list', { cursor: 42 }],
      ['skills/list', { cursor: '' }],
      ['skills/list', { cursor: 'x'.repeat(20_000) }],
      ['resources/subscribe', { uri: 42 }],
    ];
    const wrong: string[] = [];
    for (const [method, params] of cases) {
      const response = await session.call(method, params);
      const error = errorOf(response);
      if (error?.code !== -32602)
        wrong.push(
          `${method} ${JSON.stringify(params).slice(0, 60)} → ${error === undefined ? 'result' : `${error.code} ${error.message.slice(0, 60).replace(/\s+/gu, ' ')}`}`,
        );
      // Whatever the code, a client gets a message, never a stack.
      expect(STACK_FRAME.test(error?.message ?? '')).toBe(false);
    }
    await session.expectAlive();
    session.expectWireClean();
    expect(wrong).toEqual([]);
  });

  it('answers unknown methods with -32601 (prototype names included) and ignores unknown notifications', async () => {
    const session = await startSession([await smallTree()]);
    for (const method of [
      'nope',
      'skills/unknown',
      'skills/',
      'resources/delete',
      'rpc.discover',
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'skills/list/../get',
    ]) {
      expect(errorOf(await session.call(method, {}))?.code, method).toBe(-32601);
    }
    const before = session.server.messages.length;
    session.server.send({ jsonrpc: '2.0', method: 'nope' });
    session.server.send({ jsonrpc: '2.0', method: 'notifications/unknown', params: { x: 1 } });
    session.server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 987_654 } });
    session.server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await session.expectAlive();
    expect(session.server.messages.length).toBe(before + 1); // only the ping's response
    session.expectWireClean();
  });

  it('treats a request without an id as a notification: no response, no crash', async () => {
    const session = await startSession([await smallTree()]);
    await session.call('skills/list', {});
    const before = session.server.messages.length;
    session.server.send({ jsonrpc: '2.0', method: 'skills/list', params: {} });
    session.server.send({ jsonrpc: '2.0', method: 'resources/read', params: { uri: 'skill://alpha/SKILL.md' } });
    session.server.send({ jsonrpc: '2.0', method: 'resources/read', params: { uri: 'skill://nope/SKILL.md' } });
    session.server.send({ jsonrpc: '2.0', method: 'ping' });
    await session.expectAlive();
    expect(session.server.messages.length).toBe(before + 1);
    session.expectWireClean();
  });
});

describe('huge lines', () => {
  it('handles a 5 MB line: a padded ping is answered, a 5 MB URI is refused with -32602', async () => {
    const session = await startSession([await smallTree()]);
    const pad = 'p'.repeat(5 * 1024 * 1024);
    expect((await session.call('ping', { pad }, 20_000))['result']).toEqual({});
    const hugeUri = `skill://alpha/${'a'.repeat(5 * 1024 * 1024)}`;
    const codes: Record<string, number | string> = {};
    for (const method of ['resources/read', 'skills/get', 'resources/directory/read']) {
      const response = await session.call(method, { uri: hugeUri }, 20_000);
      codes[method] = errorOf(response)?.code ?? 'result';
    }
    await session.expectAlive();
    session.expectWireClean();
    expect(codes).toEqual({ 'resources/read': -32602, 'skills/get': -32602, 'resources/directory/read': -32602 });
  }, 60_000);

  it.each([
    ['watching (default)', [] as string[]],
    ['--no-watch', ['--no-watch']],
  ])(
    'a line over the 10 MiB limit (%s) is answered with -32600 (id null) and discarded; the session goes on',
    async (_label, flags) => {
      const session = await startSession([...flags, await smallTree()]);
      await session.expectAlive();
      const { server } = session;
      const padded = `${JSON.stringify({ jsonrpc: '2.0', id: session.id(), method: 'ping', params: { pad: 'x'.repeat(11 * 1024 * 1024) } })}\n`;
      server.child.stdin?.write(padded);
      const answer = await server.waitFor(
        (message) => message['id'] === null && message['error'] !== undefined,
        15_000,
      );
      expect(answer['error']).toEqual({
        code: -32600,
        message: `Invalid Request: the message is ${Buffer.byteLength(padded) - 1} bytes; the limit is ${10 * 1024 * 1024}`,
      });
      expect(await waitForEvent(server.stderr, 'rejected')).toMatchObject({ level: 40, code: -32600, id: null });
      const pingId = session.id();
      server.send({ jsonrpc: '2.0', id: pingId, method: 'ping' });
      expect((await server.waitFor((message) => message['id'] === pingId, 10_000))['result']).toEqual({});
      session.expectWireClean();
      server.child.stdin?.end();
      expect(await server.exited()).toEqual({ code: 0, signal: null });
    },
    60_000,
  );
});

describe('a changing disk', () => {
  it('answers every request consistently while the index rebuilds under edits', async () => {
    const SKILLS = 300;
    const spec: Record<string, string> = {};
    for (let index = 0; index < SKILLS; index++) {
      const name = `skill-${String(index).padStart(3, '0')}`;
      spec[`${name}/SKILL.md`] = skillMd(name, `Synthetic skill ${index}.`);
      for (let file = 0; file < 4; file++) spec[`${name}/refs/r${file}.md`] = `v1 ${name} r${file}\n`.repeat(20);
    }
    const root = await temps.tree(spec);
    const session = await startSession([root]);
    // Requests sent before the first build finishes wait for it; every page (a page holds at most 100 entries).
    const listed = (await listAll(session.server, 30_000)).skills;
    expect(listed).toHaveLength(SKILLS);

    // Known versions of every file: a successful read must return one of them.
    const versions = new Map<string, Set<string>>();
    const uriOf = (rel: string) => `skill://${rel}`;
    for (const [rel, text] of Object.entries(spec)) versions.set(uriOf(rel), new Set([text]));

    // Skills deleted during the reads: a read of one of their files may find it gone.
    const removed = new Set<string>();
    const edits = (async () => {
      for (let round = 0; round < 20; round++) {
        const victim = `skill-${String(round * 7).padStart(3, '0')}`;
        const changed = `${victim}/refs/r1.md`;
        const text = `v2 round ${round}\n`.repeat(30);
        // writeFile truncates, then writes: for a moment the file is empty on disk, and a rebuild may see it so.
        versions.get(uriOf(changed))?.add(text).add('');
        await fsp.writeFile(path.join(root, changed), text);
        if (round % 3 === 0) {
          const gone = `skill-${String(round * 7 + 1).padStart(3, '0')}`;
          removed.add(gone);
          await fsp.rm(path.join(root, gone), { recursive: true, force: true });
        }
        if (round % 4 === 0)
          await addToTree(root, { [`added-${round}/SKILL.md`]: skillMd(`added-${round}`, `Added in round ${round}.`) });
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();

    const problems: string[] = [];
    const uris = listed.flatMap((skill) => skill.resources.map((resource) => resource.uri));
    const reads = (async () => {
      for (let pass = 0; pass < 2; pass++) {
        const batch = await Promise.all(
          uris.map(async (uri) => ({ uri, response: await session.call('resources/read', { uri }, 30_000) })),
        );
        for (const { uri, response } of batch) {
          const error = errorOf(response);
          if (error !== undefined) {
            // The one error a read may meet: the file's skill was deleted, and re-indexing it before answering found
            // the file gone. An edited file is re-indexed and served in its new version, never refused.
            const skill = /^skill:\/\/([^/]+)\//u.exec(uri)?.[1] ?? '';
            const expected = { code: -32602, message: `Resource not found: ${uri}` };
            if (!removed.has(skill) || !isDeepStrictEqual(error, expected))
              problems.push(`${uri}: ${error.code} ${error.message}`);
            continue;
          }
          const contents = (response['result'] as { contents: { text?: string }[] }).contents[0];
          if (contents?.text === undefined || !versions.get(uri)?.has(contents.text))
            problems.push(
              `${uri}: served bytes that were never on disk: ${JSON.stringify(contents?.text?.slice(0, 80))}`,
            );
        }
        const page = await session.call('skills/list', {}, 30_000);
        if (errorOf(page) !== undefined) problems.push(`skills/list: ${JSON.stringify(errorOf(page))}`);
        const dir = await session.call('resources/directory/read', { uri: 'skill://skill-000/refs' }, 30_000);
        if (errorOf(dir) !== undefined) problems.push(`directory read: ${JSON.stringify(errorOf(dir))}`);
      }
    })();
    await Promise.all([edits, reads]);
    expect(problems).toEqual([]);

    // Once the watcher catches up, the catalog is exactly the disk.
    await converge(session.server, root, 20_000);
    await session.expectAlive();
    session.expectWireClean();
  }, 120_000);

  it.each([
    ['watching', [] as string[]],
    ['--no-watch', ['--no-watch']],
  ])(
    'a file deleted between listing and reading (%s): -32602 Resource not found, the skill re-indexed first',
    async (label, flags) => {
      const root = await smallTree();
      const session = await startSession([...flags, root]);
      const uri = 'skill://alpha/notes.txt';
      const resourcesOfAlpha = async (): Promise<string[]> =>
        (
          (await session.call('skills/get', { uri: 'skill://alpha/SKILL.md' }))['result'] as {
            skill: { resources: { uri: string }[] };
          }
        ).skill.resources.map((resource) => resource.uri);
      expect(await resourcesOfAlpha()).toEqual(['skill://alpha/SKILL.md', uri, 'skill://alpha/refs/guide.md']);
      const logsBefore = session.server.logs().length;
      await fsp.rm(path.join(root, 'alpha', 'notes.txt'));
      const response = await session.call('resources/read', { uri });
      expect(errorOf(response), JSON.stringify(response)).toEqual({
        code: -32602,
        message: `Resource not found: ${uri}`,
      });
      // The answer comes from a snapshot without the file: the entry no longer lists it either, at once.
      expect(await resourcesOfAlpha()).toEqual(['skill://alpha/SKILL.md', 'skill://alpha/refs/guide.md']);
      // The snapshot without the file was logged (stderr is a separate pipe: awaited, then counted).
      await waitForEvent(session.server.stderr, 'index-updated', {}, { after: logsBefore });
      const logged = session.server.logs().slice(logsBefore);
      if (label === '--no-watch') {
        // Nothing else can have noticed: the read found the file gone, logged it and re-indexed the skill.
        expect(eventsOf(logged, 'reindex')).toMatchObject([{ level: 30, uri }]);
        expect(eventsOf(logged, 'index-updated')).toMatchObject([{ skills: 2, files: 4, generation: 2 }]);
      } else {
        // The watcher may have re-indexed first (then the read finds no such file and logs nothing itself); either way
        // a new snapshot without the file was logged, and a reindex, if any, names this URI.
        for (const line of eventsOf(logged, 'reindex')) expect(line).toMatchObject({ uri });
      }
      await session.expectAlive();
      session.expectWireClean();
    },
  );

  it('a whole skill deleted between listing and reading: the read answers -32602 Resource not found and the skill leaves skills/list', async () => {
    const root = await smallTree();
    const session = await startSession([root]);
    await session.call('skills/list', {});
    await fsp.rm(path.join(root, 'beta'), { recursive: true });
    const uri = 'skill://beta/data.txt';
    expect(errorOf(await session.call('resources/read', { uri }))).toEqual({
      code: -32602,
      message: `Resource not found: ${uri}`,
    });
    expect((await converge(session.server, root)).map((skill) => skill.uri)).toEqual(['skill://alpha/SKILL.md']);
    expect(errorOf(await session.call('skills/get', { uri: 'skill://beta/SKILL.md' }))).toEqual({
      code: -32602,
      message: 'No skill is served at skill://beta/SKILL.md',
    });
    await session.expectAlive();
    session.expectWireClean();
  });

  it('a served file replaced by a FIFO or a directory (--no-watch): not served, answered -32602 without blocking, re-indexed', async () => {
    const root = await smallTree();
    const session = await startSession(['--no-watch', root]);
    await session.call('skills/list', {});
    await fsp.rm(path.join(root, 'alpha', 'notes.txt'));
    execFileSync('mkfifo', [path.join(root, 'alpha', 'notes.txt')]);
    await fsp.rm(path.join(root, 'beta', 'data.txt'));
    await fsp.mkdir(path.join(root, 'beta', 'data.txt'));
    const logsBefore = session.server.logs().length;
    // A FIFO is no file a skill may hold: re-indexed, the skill no longer publishes it.
    const fifo = 'skill://alpha/notes.txt';
    expect(errorOf(await session.call('resources/read', { uri: fifo }, 10_000))).toEqual({
      code: -32602,
      message: `Resource not found: ${fifo}`,
    });
    // A directory now stands where the file was: re-indexed, the URI names a directory resource.
    const dir = 'skill://beta/data.txt';
    expect(errorOf(await session.call('resources/read', { uri: dir }, 10_000))).toEqual({
      code: -32602,
      message: `${dir} is a directory; use resources/directory/read`,
    });
    await waitForEvent(session.server.stderr, 'index-updated', { generation: 3 }, { after: logsBefore });
    const logged = session.server.logs().slice(logsBefore);
    expect(eventsOf(logged, 'reindex').map((line) => line['uri'])).toEqual([fifo, dir]);
    expect(eventsOf(logged, 'diagnostic')).toMatchObject([
      { level: 30, rule: 'special-file', severity: 'warning', file: path.join(root, 'alpha', 'notes.txt') },
    ]);
    await session.expectAlive();
    expect(
      (
        (await session.call('resources/read', { uri: 'skill://alpha/refs/guide.md' }))['result'] as {
          contents: { text: string }[];
        }
      ).contents[0]?.text,
    ).toBe('# guide\n');
    session.expectWireClean();
  });

  // Permission checks do not apply to root (CI runs as root): chmod 000 would still be readable, so the case is moot.
  it.skipIf(process.getuid?.() === 0)(
    'a served file made unreadable (chmod 000): -32603 naming the URI, a read-failed event naming the path and EACCES',
    async () => {
      const root = await smallTree();
      const session = await startSession(['--no-watch', root]);
      await session.call('skills/list', {});
      await fsp.chmod(path.join(root, 'alpha', 'notes.txt'), 0o000);
      try {
        const logsBefore = session.server.logs().length;
        const error = errorOf(await session.call('resources/read', { uri: 'skill://alpha/notes.txt' }));
        expect(error).toEqual({ code: -32603, message: 'skill://alpha/notes.txt could not be read' });
        await waitForEvent(session.server.stderr, 'read-failed', {}, { after: logsBefore });
        expect(eventsOf(session.server.logs().slice(logsBefore), 'read-failed')).toMatchObject([
          { level: 40, path: path.join(root, 'alpha', 'notes.txt'), code: 'EACCES' },
        ]);
        await session.expectAlive();
        session.expectWireClean();
      } finally {
        await fsp.chmod(path.join(root, 'alpha', 'notes.txt'), 0o644);
      }
    },
  );
});

describe('URIs the server hands out', () => {
  let root: string;
  beforeAll(async () => {
    // 12 nested directories of 85 × U+65E5 (255 bytes each, NAME_MAX): a legal path of ~3.1 KB (under PATH_MAX
    // 4096) whose URI, at 9 characters per 3-byte character, is ~9.2 KB.
    root = await temps.tempDir();
    const segment = '\u65e5'.repeat(85);
    const deep = ['s', ...Array.from({ length: 12 }, () => segment), 'deep.txt'].join('/');
    await addToTree(root, { 's/SKILL.md': skillMd('s', 'Deep paths.'), [deep]: 'deep\n' });
  });

  it('every URI in skills/list reads back, even for a legal path near PATH_MAX', async () => {
    const session = await startSession(['--no-watch', root]);
    const { skills } = (await session.call('skills/list', {}))['result'] as {
      skills: { resources: { uri: string }[] }[];
    };
    const uris = skills.flatMap((skill) => skill.resources.map((resource) => resource.uri));
    expect(uris).toHaveLength(2);
    const unreadable: string[] = [];
    for (const uri of uris) {
      const error = errorOf(await session.call('resources/read', { uri }));
      if (error !== undefined) unreadable.push(`${uri.slice(0, 40)}… (${uri.length} chars): ${error.code}`);
    }
    await session.expectAlive();
    expect(unreadable, 'advertised URIs that do not read back').toEqual([]);
  });
});
