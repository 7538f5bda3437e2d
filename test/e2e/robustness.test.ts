/**
 * Robustness of the stdio server against hostile or broken input and a changing disk (issue 6 "Hardening").
 *
 * Everything here talks raw JSON lines to `bin/skills-serve.js` (spawnRaw), in the 2025-11-25 era. After every
 * hostile step the server must still answer `ping`, every stdout line must be a JSON-RPC 2.0 message, stdout must
 * never carry a stack trace, and a hostile input that got no JSON-RPC answer must at least have been logged on
 * stderr (an operator must be able to see why a host's request went nowhere).
 */
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handshake, spawnRaw, type RawServer } from '../helpers/server.js';
import { addToTree, skillMd, tempTrees } from '../helpers/tree.js';

type Message = Record<string, unknown>;
interface RpcError {
  readonly code: number;
  readonly message: string;
}

/** A stack frame as V8 prints it (`at fn (file:///…:1:2)`, `at node:internal/…`). */
const STACK_FRAME = /\bat (?:\S+ \()?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+/u;

/** A raw session: spawned, initialized (2025-11-25), with helpers for requests and wire checks. */
interface Session {
  readonly server: RawServer;
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

const sessions: Session[] = [];
const temps = tempTrees();

afterEach(async () => {
  for (const session of sessions.splice(0)) {
    const { child } = session.server;
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      const exited = await Promise.race([session.server.exited(), new Promise((resolve) => setTimeout(() => resolve('timeout'), 5_000))]);
      if (exited === 'timeout') child.kill('SIGKILL');
    }
  }
});
afterAll(() => temps.removeAll());

async function startSession(args: readonly string[]): Promise<Session> {
  const server = spawnRaw(args, { SKILLS_SERVE_LOG_LEVEL: 'info' });
  // Writes after the server stopped reading must not crash the test runner with EPIPE.
  server.child.stdin?.on('error', () => undefined);
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
    expectWireClean: () => {
      for (const line of server.lines) {
        let message: Message;
        try {
          message = JSON.parse(line) as Message;
        } catch {
          throw new Error(`stdout carried a non-JSON line: ${line.slice(0, 200)}`);
        }
        expect(message['jsonrpc'], line.slice(0, 200)).toBe('2.0');
        const isResponse = 'id' in message && ('result' in message || 'error' in message);
        const isRequestOrNotification = typeof message['method'] === 'string';
        expect(isResponse || isRequestOrNotification, line.slice(0, 200)).toBe(true);
        expect(STACK_FRAME.test(line), `stack trace on stdout: ${line.slice(0, 300)}`).toBe(false);
      }
    },
  };
  sessions.push(session);
  await handshake(server);
  return session;
}

function errorOf(message: Message): RpcError | undefined {
  return message['error'] as RpcError | undefined;
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

/**
 * Sends each raw line, then a ping; for each line, reports whether it was answered (any response whose id is the
 * line's id, or null) or at least logged on stderr. Returns the lines that were neither.
 */
async function silentlyDropped(session: Session, lines: readonly { line: string | Uint8Array; id?: number | string }[]): Promise<string[]> {
  const dropped: string[] = [];
  for (const { line, id } of lines) {
    const stderrBefore = session.server.stderr().length;
    const linesBefore = session.server.lines.length;
    session.sendLine(line);
    await session.expectAlive();
    // A response may be produced asynchronously after the ping's; give it a moment.
    const answered = await session.server
      .waitFor((message) => (id !== undefined && message['id'] === id) || (message['id'] === null && 'error' in message), 500)
      .then(() => true)
      .catch(() => false);
    const answeredNow = answered && session.server.lines.length > linesBefore;
    const logged = session.server.stderr().length > stderrBefore;
    if (!answeredNow && !logged) dropped.push(typeof line === 'string' ? line.slice(0, 80) : `<bytes ${Buffer.from(line).toString('hex')}>`);
  }
  return dropped;
}

describe('hostile JSON lines', () => {
  it('answers malformed JSON with -32700 or logs it, and keeps serving', async () => {
    const session = await startSession([await smallTree()]);
    const dropped = await silentlyDropped(session, [
      { line: '{not json' },
      { line: '{"jsonrpc":"2.0","id":' },
      { line: '}' },
      { line: '{"jsonrpc":"2.0","id":7,"method":"ping"' },
      { line: Buffer.from([0xff, 0xfe, 0x7b, 0x22]) },
      { line: '\u0000' },
    ]);
    // Blank lines are not errors; they must merely not disturb the session.
    session.sendLine('');
    session.sendLine('   ');
    await session.expectAlive();
    session.expectWireClean();
    expect(dropped, 'malformed lines that got neither a -32700 response nor a log line').toEqual([]);
  });

  it('rejects non-object JSON values and JSON-RPC batches (answered or logged), and keeps serving', async () => {
    const session = await startSession([await smallTree()]);
    const batchId = session.id();
    const dropped = await silentlyDropped(session, [
      { line: 'null' },
      { line: '42' },
      { line: '"skills/list"' },
      { line: 'true' },
      { line: '{}' },
      { line: '[]' },
      { line: JSON.stringify([{ jsonrpc: '2.0', id: batchId, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }]), id: batchId },
    ]);
    await session.expectAlive();
    session.expectWireClean();
    expect(dropped).toEqual([]);
  });

  it('answers every request that carries a usable id exactly once, whatever else is wrong with it', async () => {
    const session = await startSession([await smallTree()]);
    const cases: { label: string; message: Message }[] = [
      { label: 'params is a string', message: { jsonrpc: '2.0', method: 'resources/read', params: 'skill://alpha/SKILL.md' } },
      { label: 'params is an array', message: { jsonrpc: '2.0', method: 'resources/read', params: ['skill://alpha/SKILL.md'] } },
      { label: 'params is null', message: { jsonrpc: '2.0', method: 'skills/list', params: null } },
      { label: 'params is a number', message: { jsonrpc: '2.0', method: 'skills/get', params: 42 } },
      { label: '_meta is a string', message: { jsonrpc: '2.0', method: 'resources/read', params: { uri: 'skill://alpha/SKILL.md', _meta: 'x' } } },
      { label: 'method is a number', message: { jsonrpc: '2.0', method: 42 } },
      { label: 'jsonrpc is "1.0"', message: { jsonrpc: '1.0', method: 'ping' } },
      { label: 'jsonrpc is missing', message: { method: 'ping' } },
    ];
    const unanswered: string[] = [];
    const answers: Record<string, unknown> = {};
    for (const { label, message } of cases) {
      const id = session.id();
      session.server.send({ ...message, id });
      session.server.send({ jsonrpc: '2.0', id: session.id(), method: 'ping' });
      // Lines are handled in order: by the time the ping after it is answered, so is the case (if ever); 1 s of slack.
      const response = await session.server.waitFor((m) => m['id'] === id || (m['id'] === null && 'error' in m), 1_000).catch(() => undefined);
      if (response === undefined) unanswered.push(label);
      else answers[label] = errorOf(response)?.code ?? 'result';
      await session.expectAlive();
    }
    session.expectWireClean();
    // A host waits for every request it sent: an unanswered one hangs it until its own timeout.
    expect(unanswered, `answered: ${JSON.stringify(answers)}`).toEqual([]);
    for (const code of Object.values(answers)) expect([-32600, -32602, -32601]).toContain(code);
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
      if (error?.code !== -32602) wrong.push(`${method} ${JSON.stringify(params).slice(0, 60)} → ${error === undefined ? 'result' : `${error.code} ${error.message.slice(0, 60).replace(/\s+/gu, ' ')}`}`);
      // Whatever the code, a client gets a message, never a stack.
      expect(STACK_FRAME.test(error?.message ?? '')).toBe(false);
    }
    await session.expectAlive();
    session.expectWireClean();
    expect(wrong).toEqual([]);
  });

  it('answers unknown methods with -32601 (prototype names included) and ignores unknown notifications', async () => {
    const session = await startSession([await smallTree()]);
    for (const method of ['nope', 'skills/unknown', 'skills/', 'resources/delete', 'rpc.discover', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'skills/list/../get']) {
      expect(errorOf(await session.call(method, {}))?.code, method).toBe(-32601);
    }
    const before = session.server.lines.length;
    session.server.send({ jsonrpc: '2.0', method: 'nope' });
    session.server.send({ jsonrpc: '2.0', method: 'notifications/unknown', params: { x: 1 } });
    session.server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 987_654 } });
    session.server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await session.expectAlive();
    expect(session.server.lines.length).toBe(before + 1); // only the ping's response
    session.expectWireClean();
  });

  it('treats a request without an id as a notification: no response, no crash', async () => {
    const session = await startSession([await smallTree()]);
    await session.call('skills/list', {});
    const before = session.server.lines.length;
    session.server.send({ jsonrpc: '2.0', method: 'skills/list', params: {} });
    session.server.send({ jsonrpc: '2.0', method: 'resources/read', params: { uri: 'skill://alpha/SKILL.md' } });
    session.server.send({ jsonrpc: '2.0', method: 'resources/read', params: { uri: 'skill://nope/SKILL.md' } });
    session.server.send({ jsonrpc: '2.0', method: 'ping' });
    await session.expectAlive();
    expect(session.server.lines.length).toBe(before + 1);
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
  ])('a line over the 10 MiB limit (%s) is answered with -32600 (id null) and discarded; the session goes on', async (_label, flags) => {
    const session = await startSession([...flags, await smallTree()]);
    await session.expectAlive();
    const { server } = session;
    const padded = `${JSON.stringify({ jsonrpc: '2.0', id: session.id(), method: 'ping', params: { pad: 'x'.repeat(11 * 1024 * 1024) } })}\n`;
    server.child.stdin?.write(padded);
    const answer = await server.waitFor((message) => message['id'] === null && message['error'] !== undefined, 15_000);
    expect(answer['error']).toEqual({ code: -32600, message: `Invalid Request: the message is ${Buffer.byteLength(padded) - 1} bytes; the limit is ${10 * 1024 * 1024}` });
    const rejected = server.logs().find((line) => line['event'] === 'rejected');
    expect(rejected).toMatchObject({ level: 40, code: -32600, id: null });
    const pingId = session.id();
    server.send({ jsonrpc: '2.0', id: pingId, method: 'ping' });
    expect((await server.waitFor((message) => message['id'] === pingId, 10_000))['result']).toEqual({});
    session.expectWireClean();
    server.child.stdin?.end();
    expect(await server.exited()).toBe(0);
  }, 60_000);
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
    const session = await startSession(['--page-size', '10000', root]);
    // Requests sent before the first build finishes wait for it.
    const first = await session.call('skills/list', {}, 30_000);
    const listed = (first['result'] as { skills: { uri: string; resources: { uri: string }[] }[] }).skills;
    expect(listed).toHaveLength(SKILLS);

    // Known versions of every file: a successful read must return one of them.
    const versions = new Map<string, Set<string>>();
    const uriOf = (rel: string) => `skill://${rel}`;
    for (const [rel, text] of Object.entries(spec)) versions.set(uriOf(rel), new Set([text]));

    const edits = (async () => {
      for (let round = 0; round < 20; round++) {
        const victim = `skill-${String(round * 7).padStart(3, '0')}`;
        const changed = `${victim}/refs/r1.md`;
        const text = `v2 round ${round}\n`.repeat(30);
        versions.get(uriOf(changed))?.add(text);
        await fsp.writeFile(path.join(root, changed), text);
        if (round % 3 === 0) await fsp.rm(path.join(root, `skill-${String(round * 7 + 1).padStart(3, '0')}`), { recursive: true, force: true });
        if (round % 4 === 0) await addToTree(root, { [`added-${round}/SKILL.md`]: skillMd(`added-${round}`, `Added in round ${round}.`) });
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();

    const problems: string[] = [];
    const uris = listed.flatMap((skill) => skill.resources.map((resource) => resource.uri));
    const reads = (async () => {
      for (let pass = 0; pass < 2; pass++) {
        const batch = await Promise.all(uris.map(async (uri) => ({ uri, response: await session.call('resources/read', { uri }, 30_000) })));
        for (const { uri, response } of batch) {
          const error = errorOf(response);
          if (error !== undefined) {
            if (![-32602, -32603].includes(error.code) || !error.message.includes(uri)) problems.push(`${uri}: ${error.code} ${error.message}`);
            continue;
          }
          const contents = (response['result'] as { contents: { text?: string }[] }).contents[0];
          if (contents?.text === undefined || !versions.get(uri)?.has(contents.text)) problems.push(`${uri}: served bytes that were never on disk`);
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
    const expected = new Set<string>();
    for (const entry of await fsp.readdir(root)) expected.add(`skill://${entry}/SKILL.md`);
    const deadline = Date.now() + 20_000;
    let current = new Set<string>();
    while (Date.now() < deadline) {
      const page = await session.call('skills/list', {}, 30_000);
      current = new Set((page['result'] as { skills: { uri: string }[] }).skills.map((skill) => skill.uri));
      if (current.size === expected.size && [...expected].every((uri) => current.has(uri))) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([...current].sort()).toEqual([...expected].sort());
    await session.expectAlive();
    session.expectWireClean();
  }, 120_000);

  it.each([
    ['watching', [] as string[]],
    ['--no-watch', ['--no-watch']],
  ])('a file deleted between listing and reading (%s): -32602/-32603 naming the URI, logged, then no longer listed', async (_label, flags) => {
    const root = await smallTree();
    const session = await startSession([...flags, root]);
    const uri = 'skill://alpha/notes.txt';
    const before = (await session.call('skills/get', { uri: 'skill://alpha/SKILL.md' }))['result'] as { skill: { resources: { uri: string }[] } };
    expect(before.skill.resources.map((resource) => resource.uri)).toContain(uri);
    const stderrBefore = session.server.stderr().length;
    await fsp.rm(path.join(root, 'alpha', 'notes.txt'));
    const response = await session.call('resources/read', { uri });
    const error = errorOf(response);
    expect(error?.code === -32602 || error?.code === -32603, JSON.stringify(response)).toBe(true);
    expect(error?.message).toContain(uri);
    expect(session.server.stderr().length, 'the vanished file left no trace on stderr').toBeGreaterThan(stderrBefore);
    await session.expectAlive();
    // The catalog drops it (after the watcher, or after the read re-indexed the skill).
    const deadline = Date.now() + 15_000;
    let resources: string[] = [];
    while (Date.now() < deadline) {
      const entry = (await session.call('skills/get', { uri: 'skill://alpha/SKILL.md' }))['result'] as { skill: { resources: { uri: string }[] } };
      resources = entry.skill.resources.map((resource) => resource.uri);
      if (!resources.includes(uri)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(resources).not.toContain(uri);
    expect(resources).toContain('skill://alpha/refs/guide.md');
    session.expectWireClean();
  });

  it('a whole skill deleted between listing and reading: its SKILL.md read fails cleanly and the skill leaves skills/list', async () => {
    const root = await smallTree();
    const session = await startSession([root]);
    await session.call('skills/list', {});
    await fsp.rm(path.join(root, 'beta'), { recursive: true });
    const error = errorOf(await session.call('resources/read', { uri: 'skill://beta/data.txt' }));
    expect(error?.code === -32602 || error?.code === -32603).toBe(true);
    expect(error?.message).toContain('skill://beta/data.txt');
    const deadline = Date.now() + 15_000;
    let uris: string[] = [];
    while (Date.now() < deadline) {
      uris = ((await session.call('skills/list', {}))['result'] as { skills: { uri: string }[] }).skills.map((skill) => skill.uri);
      if (!uris.includes('skill://beta/SKILL.md')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(uris).toEqual(['skill://alpha/SKILL.md']);
    expect(errorOf(await session.call('skills/get', { uri: 'skill://beta/SKILL.md' }))?.code).toBe(-32602);
    await session.expectAlive();
    session.expectWireClean();
  });

  it('a served file replaced by a FIFO or a directory (index not yet updated) is never read in a way that blocks', async () => {
    const root = await smallTree();
    const session = await startSession(['--no-watch', root]);
    await session.call('skills/list', {});
    await fsp.rm(path.join(root, 'alpha', 'notes.txt'));
    execFileSync('mkfifo', [path.join(root, 'alpha', 'notes.txt')]);
    await fsp.rm(path.join(root, 'beta', 'data.txt'));
    await fsp.mkdir(path.join(root, 'beta', 'data.txt'));
    for (const uri of ['skill://alpha/notes.txt', 'skill://beta/data.txt']) {
      const error = errorOf(await session.call('resources/read', { uri }, 10_000));
      expect(error?.code === -32602 || error?.code === -32603, uri).toBe(true);
      expect(error?.message).toContain(uri);
    }
    await session.expectAlive();
    expect(((await session.call('resources/read', { uri: 'skill://alpha/refs/guide.md' }))['result'] as { contents: { text: string }[] }).contents[0]?.text).toBe('# guide\n');
    session.expectWireClean();
  });

  // Permission checks do not apply to root (CI runs as root): chmod 000 would still be readable, so the case is moot.
  it.skipIf(process.getuid?.() === 0)('a served file made unreadable (chmod 000): -32603 naming the URI, logged with the reason', async () => {
    const root = await smallTree();
    const session = await startSession(['--no-watch', root]);
    await session.call('skills/list', {});
    await fsp.chmod(path.join(root, 'alpha', 'notes.txt'), 0o000);
    try {
      const stderrBefore = session.server.stderr().length;
      const error = errorOf(await session.call('resources/read', { uri: 'skill://alpha/notes.txt' }));
      expect(error?.code).toBe(-32603);
      expect(error?.message).toContain('skill://alpha/notes.txt');
      expect(session.server.stderr().slice(stderrBefore)).toContain('EACCES');
      await session.expectAlive();
      session.expectWireClean();
    } finally {
      await fsp.chmod(path.join(root, 'alpha', 'notes.txt'), 0o644);
    }
  });
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
    const { skills } = (await session.call('skills/list', {}))['result'] as { skills: { resources: { uri: string }[] }[] };
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
