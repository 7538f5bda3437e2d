/**
 * Containment over the real stdio transport (SEP-2640 "Security": the server "serves only files
 * inside the directories it was given"). Hostile URIs sent to `resources/read`, `skills/get` and
 * `resources/directory/read` must all be refused with -32602, and must not make the server open anything outside
 * its root.
 *
 * "Nothing outside is read" is proven with access times: the files next to the served root get an atime well before
 * their mtime. The filesystem under `os.tmpdir()` is ext4 with `relatime`, where any read of such a file moves its
 * atime forward. The setup first proves this on a control file (read once: atime moves), so the proof cannot pass
 * silently on a `noatime` mount. (An `open()` followed by no `read()` leaves atime alone; the proof covers reads, which
 * is what could leak bytes.)
 *
 * Tree (the served root is `<base>/skills`; `<base>/skills-secret` is a sibling whose name starts with the root's):
 * ```
 * <base>/secret.txt                    sentinel; what `skill://s/../../secret.txt` would reach by a path join
 * <base>/control.txt                   control file for the atime self-check
 * <base>/skills-secret/SKILL.md        a valid skill, outside the root
 * <base>/skills-secret/secret.txt      sentinel
 * <base>/skills/s/SKILL.md             the one served skill
 * <base>/skills/s/notes.txt
 * <base>/skills/s/sub/inner.md
 * <base>/skills/s/ok-link -> notes.txt                 link inside the root: served (proves links work at all)
 * <base>/skills/s/link-to-secret -> <base>/secret.txt  absolute link out of the root: never served
 * <base>/skills/s/rel-link -> ../../secret.txt         relative link out of the root: never served
 * <base>/skills/s/linkdir -> ../../skills-secret       directory link out of the root: never served
 * ```
 */
import { promises as fsp, readFileSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';

import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { connect, type Connection, ERAS, rawRequest } from '../helpers/server.js';
import { addToTree, makeTempDir, removeTree, skillMd } from '../helpers/tree.js';

const METHODS = ['resources/read', 'skills/get', 'resources/directory/read'] as const;
type Method = (typeof METHODS)[number];

const SENTINEL_TEXT = 'SENTINEL-7f3c2a-do-not-serve\n';
/** atime well before mtime: under relatime, the next read of the file moves atime. */
const OLD_ATIME = new Date('2001-01-01T00:00:00Z');
const OLD_MTIME = new Date('2011-01-01T00:00:00Z');

/** What a request got: an error code and message, or a result. */
type Outcome =
  { readonly code: number; readonly message: string; readonly data?: unknown } | { readonly result: unknown };

async function outcomeOf(connection: Connection, method: Method, params: Record<string, unknown>): Promise<Outcome> {
  try {
    return { result: await rawRequest(connection, method, params) };
  } catch (error) {
    if (error instanceof ProtocolError) return { code: error.code, message: error.message, data: error.data };
    throw error;
  }
}

describe.each([ERAS[1], ERAS[2]])('containment, era $label', (era) => {
  let base: string;
  let root: string;
  let sentinels: string[];
  let connection: Connection;

  beforeAll(async () => {
    base = await makeTempDir();
    root = path.join(base, 'skills');
    await addToTree(base, {
      'secret.txt': SENTINEL_TEXT,
      'control.txt': 'control\n',
      'skills-secret/SKILL.md': skillMd('skills-secret', `Outside the root. ${SENTINEL_TEXT.trim()}`),
      'skills-secret/secret.txt': SENTINEL_TEXT,
      'skills/s/SKILL.md': skillMd('s', 'The only served skill.'),
      'skills/s/notes.txt': 'notes\n',
      'skills/s/sub/inner.md': '# inner\n',
      'skills/s/ok-link': { symlink: 'notes.txt' },
      'skills/s/link-to-secret': { symlink: path.join(base, 'secret.txt') },
      'skills/s/rel-link': { symlink: '../../secret.txt' },
      'skills/s/linkdir': { symlink: '../../skills-secret' },
    });
    sentinels = [
      path.join(base, 'secret.txt'),
      path.join(base, 'skills-secret', 'secret.txt'),
      path.join(base, 'skills-secret', 'SKILL.md'),
    ];
    // --compat on: the read-only tools for hosts without the extension are one more way to name a file.
    connection = await connect(['--compat', 'on', root], era);
    // The first index build (and the watcher's start) are over once skills/list answers.
    expect((await connection.skills.list()).skills.map((skill) => skill.uri)).toEqual(['skill://s/SKILL.md']);

    // Self-check of the proof: on this filesystem, reading a file whose atime precedes its mtime moves its atime.
    const control = path.join(base, 'control.txt');
    utimesSync(control, OLD_ATIME, OLD_MTIME);
    expect(statSync(control).atimeMs).toBe(OLD_ATIME.getTime());
    readFileSync(control);
    expect(
      statSync(control).atimeMs,
      'atime did not move on read: the filesystem is mounted noatime, the proof would be vacuous',
    ).toBeGreaterThan(OLD_MTIME.getTime());

    for (const file of sentinels) utimesSync(file, OLD_ATIME, OLD_MTIME);
  });

  afterAll(async () => {
    await connection?.close();
    if (base !== undefined) await removeTree(base);
  });

  /** No sentinel was read since the setup armed it. */
  function expectSentinelsUnread(): void {
    for (const file of sentinels)
      expect(statSync(file).atimeMs, `${path.relative(base, file)} was read`).toBe(OLD_ATIME.getTime());
  }

  /** Sends `uri` to every method; returns every outcome that is not a clean -32602 (empty when all are refused). */
  async function refusals(
    uris: readonly unknown[],
    methods: readonly Method[] = METHODS,
  ): Promise<{ method: Method; uri: unknown; outcome: Outcome }[]> {
    const bad: { method: Method; uri: unknown; outcome: Outcome }[] = [];
    for (const uri of uris) {
      for (const method of methods) {
        const outcome = await outcomeOf(connection, method, { uri });
        // Error messages may echo what the client sent; anything else naming the host path or sentinel bytes is a leak.
        let serialized = JSON.stringify(outcome);
        if (typeof uri === 'string' && uri !== '')
          serialized = serialized.split(JSON.stringify(uri).slice(1, -1)).join('<sent uri>');
        const leaks = serialized.includes(SENTINEL_TEXT.trim()) || serialized.includes(base);
        if (!('code' in outcome) || outcome.code !== -32602 || leaks) {
          bad.push({
            method,
            uri: typeof uri === 'string' && uri.length > 200 ? `${uri.slice(0, 60)}… (${uri.length} chars)` : uri,
            outcome: 'result' in outcome ? outcome : { ...outcome, message: outcome.message.slice(0, 300) },
          });
        }
      }
    }
    return bad;
  }

  it('refuses encoded traversal, backslashes, NUL, dot segments and empty segments with -32602', async () => {
    const uris = [
      // Traversal, plain and encoded
      'skill://s/..%2F..%2Fsecret.txt',
      'skill://s/..%2f..%2fsecret.txt',
      'skill://s/%2e%2e/%2e%2e/secret.txt',
      'skill://s/%2E%2E/%2E%2E/secret.txt',
      'skill://s/.%2e/.%2e/secret.txt',
      'skill://s/%2e./%2e./secret.txt',
      'skill://s/../../secret.txt',
      'skill://s/sub/../../../secret.txt',
      'skill://s/%252e%252e/%252e%252e/secret.txt',
      'skill://s/%c0%ae%c0%ae/%c0%ae%c0%ae/secret.txt',
      'skill://s/\uff0e\uff0e/\uff0e\uff0e/secret.txt',
      'skill://s%2F..%2F..%2Fsecret.txt',
      'skill://..%2Fsecret.txt',
      'skill://%2e%2e/secret.txt',
      'skill://../secret.txt',
      // Backslashes
      'skill://s/..\\..\\secret.txt',
      'skill://s\\..\\..\\secret.txt',
      'skill://s/..%5C..%5Csecret.txt',
      'skill://s/sub\\..\\notes.txt',
      // NUL, encoded and raw
      'skill://s/notes.txt%00',
      'skill://s/notes.txt%00.md',
      'skill://s/%00',
      'skill://s/\u0000/../../secret.txt',
      'skill://s\u0000/SKILL.md',
      // Dot segments that would leave the skill or the root (those that stay inside are in the next test)
      'skill://s/.',
      'skill://s/..',
      'skill://./s/SKILL.md',
      'skill://s/sub/..',
      // Empty segments
      'skill://s//SKILL.md',
      'skill://s/SKILL.md/',
      'skill:///s/SKILL.md',
      'skill://s/sub//inner.md',
      'skill://s//sub',
      'skill://s/',
      'skill://',
      'skill:',
      '',
      // Query and fragment tricks
      'skill://s/SKILL.md?../../secret.txt',
      'skill://s/SKILL.md#../../secret.txt',
    ];
    expect(await refusals(uris)).toEqual([]);
    expectSentinelsUnread();
  });

  it('refuses dot segments and raw control characters even when they resolve to a served file (no normalization)', async () => {
    // src/index/uri.ts: a URI with a `.`/`..` segment, or a raw NUL, is not a well-formed skill URI; skills/get and
    // resources/directory/read refuse these. resources/read must not quietly serve another URI's bytes for them.
    const uris = [
      'skill://s/./SKILL.md',
      'skill://s/./notes.txt',
      'skill://s/sub/../notes.txt',
      'skill://s/sub/./inner.md',
      'skill://s/%2e/SKILL.md',
      'skill://s/sub/%2E%2E/notes.txt',
      'skill://s/notes.txt\u0000',
      'skill://s/notes.txt\n',
      'skill://s/no\ttes.txt',
      ' skill://s/notes.txt',
    ];
    expect(await refusals(uris)).toEqual([]);
    expectSentinelsUnread();
  });

  it('does not reach a sibling directory whose name starts with the root name (skills-secret next to skills)', async () => {
    const uris = [
      'skill://skills-secret/SKILL.md',
      'skill://skills-secret/secret.txt',
      'skill://skills-secret',
      'skill://skills/s/SKILL.md',
      'skill://skills/../skills-secret/secret.txt',
      'skill://s/../../skills-secret/secret.txt',
      'skill://s/..%2F..%2Fskills-secret%2Fsecret.txt',
      'skill://s/%2e%2e/%2e%2e/skills-secret/secret.txt',
      'skill://..%2Fskills-secret/secret.txt',
      'skill://%2e%2e/skills-secret/SKILL.md',
      'skill://-secret/secret.txt',
      'skill://s/linkdir/secret.txt',
      'skill://s/linkdir/SKILL.md',
      'skill://s/linkdir',
    ];
    expect(await refusals(uris)).toEqual([]);
    expectSentinelsUnread();
  });

  it('refuses file: URIs, bare absolute paths and skill URIs smuggling an absolute path', async () => {
    const sentinel = path.join(base, 'secret.txt');
    const uris = [
      'file:///etc/passwd',
      `file://${sentinel}`,
      `file://${path.join(base, 'skills-secret', 'secret.txt')}`,
      `file://localhost${sentinel}`,
      sentinel,
      '/etc/passwd',
      `skill://${sentinel}`,
      `skill://s/${encodeURIComponent(sentinel)}`,
      `skill://s${sentinel}`,
      `SKILL://s/../../secret.txt`,
      'http://localhost/etc/passwd',
      'skill:s/../../secret.txt',
    ];
    expect(await refusals(uris)).toEqual([]);
    expectSentinelsUnread();
  });

  it('refuses a 100 KB URI (traversal-shaped and plain) with -32602, and keeps serving', async () => {
    const huge = [
      `skill://s/${'../'.repeat(34_000)}secret.txt`,
      `skill://s/${'a'.repeat(100 * 1024)}`,
      `skill://${'%2e%2e/'.repeat(17_000)}secret.txt`,
    ];
    expect(huge.every((uri) => uri.length >= 100_000)).toBe(true);
    expect(await refusals(huge)).toEqual([]);
    expect((await connection.skills.list()).skills).toHaveLength(1);
    expectSentinelsUnread();
  });

  it('refuses non-string uri params (number, object, null, array, boolean, missing) with -32602', async () => {
    const bad = await refusals([42, { path: '../../secret.txt' }, null, ['skill://s/SKILL.md'], true]);
    const missing: typeof bad = [];
    for (const method of METHODS) {
      const outcome = await outcomeOf(connection, method, {});
      if (!('code' in outcome) || outcome.code !== -32602)
        missing.push({
          method,
          uri: '(missing)',
          outcome: 'code' in outcome ? { ...outcome, message: outcome.message.slice(0, 120) } : outcome,
        });
    }
    expect([...bad, ...missing]).toEqual([]);
    expectSentinelsUnread();
  });

  it('never lists or serves symlinks that leave the root (file and directory links), but serves links inside it', async () => {
    const { skill } = await connection.skills.get('skill://s/SKILL.md');
    const listed = skill.resources === 'dynamic' ? [] : skill.resources.map((resource) => resource.uri).sort();
    expect(listed).toEqual([
      'skill://s/SKILL.md',
      'skill://s/notes.txt',
      'skill://s/ok-link',
      'skill://s/sub/inner.md',
    ]);
    const children = (await connection.skills.readDirectory('skill://s')).resources.map((resource) => resource.uri);
    expect(children).toEqual(['skill://s/SKILL.md', 'skill://s/notes.txt', 'skill://s/ok-link', 'skill://s/sub']);
    // The link inside the root reads back the target's bytes.
    const inside = (await connection.client.readResource({ uri: 'skill://s/ok-link' })).contents[0] as {
      text?: string;
    };
    expect(inside.text).toBe('notes\n');
    expect(
      await refusals([
        'skill://s/link-to-secret',
        'skill://s/rel-link',
        'skill://s/linkdir',
        'skill://s/linkdir/secret.txt',
      ]),
    ).toEqual([]);
    expectSentinelsUnread();
  });

  it('refuses hostile names in the compat tools (read_skill, read_skill_file) without reading outside the root', async () => {
    const sentinel = path.join(base, 'secret.txt');
    const { tools } = await connection.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'list_skills',
      'read_skill',
      'read_skill_file',
      'search_skills',
    ]);
    const hostilePaths = [
      '../../secret.txt',
      '..\\..\\secret.txt',
      '%2e%2e/%2e%2e/secret.txt',
      '..%2F..%2Fsecret.txt',
      'sub/../../secret.txt',
      './../secret.txt',
      '/etc/passwd',
      sentinel,
      'link-to-secret',
      'rel-link',
      'linkdir/secret.txt',
      'notes.txt\u0000',
      '\u0000',
      'x'.repeat(100 * 1024),
    ];
    const calls: { name: string; arguments: Record<string, unknown> }[] = [
      ...hostilePaths.map((hostile) => ({ name: 'read_skill_file', arguments: { skill: 's', path: hostile } })),
      ...hostilePaths.map((hostile) => ({
        name: 'read_skill_file',
        arguments: { skill: 'skill://s/SKILL.md', path: hostile },
      })),
      ...[
        'skill://s/../../secret.txt',
        'skill://s/..%2F..%2Fsecret.txt',
        `file://${sentinel}`,
        'skill://skills-secret/secret.txt',
        'skill://s/link-to-secret',
      ].map((uri) => ({
        name: 'read_skill_file',
        arguments: { uri },
      })),
      ...['skills-secret', '../skills-secret', '..', sentinel].map((name) => ({
        name: 'read_skill',
        arguments: { name },
      })),
      ...[
        'skill://skills-secret/SKILL.md',
        'skill://s/../skills-secret/SKILL.md',
        `file://${path.join(base, 'skills-secret', 'SKILL.md')}`,
      ].map((uri) => ({ name: 'read_skill', arguments: { uri } })),
      { name: 'read_skill_file', arguments: { skill: 's', path: 42 } },
      { name: 'read_skill_file', arguments: { uri: { href: sentinel } } },
      // search_skills ranks only what the index serves: a query naming outside files finds at most the served skill.
      ...['secret', sentinel, '../../secret.txt', 'x'.repeat(100 * 1024), '\u0000', 'SECRET-9d1e'].map((query) => ({
        name: 'search_skills',
        arguments: { query },
      })),
      { name: 'search_skills', arguments: { query: { toString: 'secret' } } },
    ];
    const accepted: string[] = [];
    for (const call of calls) {
      let outcome: string;
      try {
        const result = await connection.client.callTool(call);
        const onlyServed =
          call.name === 'search_skills' &&
          result.isError !== true &&
          (result.structuredContent as { skills: { uri: string }[] }).skills.every(
            (skill) => skill.uri === 'skill://s/SKILL.md',
          );
        if (result.isError !== true && !onlyServed)
          accepted.push(
            `${call.name} ${JSON.stringify(call.arguments).slice(0, 80)} → ${JSON.stringify(result.content).slice(0, 120)}`,
          );
        outcome = JSON.stringify(result);
      } catch (error) {
        if (!(error instanceof ProtocolError)) throw error;
        expect(error.code, JSON.stringify(call).slice(0, 120)).toBe(-32602);
        outcome = error.message;
      }
      expect(outcome).not.toContain(SENTINEL_TEXT.trim());
    }
    expect(accepted, 'tool calls that were not refused').toEqual([]);
    expectSentinelsUnread();
  });

  it.each([
    ['file', 'skill://t/swap.txt'],
    ['directory', 'skill://t/sub/inner.md'],
  ])(
    'a served %s swapped for a symlink out of the root after indexing is neither served nor read',
    async (kind, uri) => {
      // --no-watch keeps the index as it was built, so the read meets the swapped path deterministically (with the
      // watcher, the same race exists for the ~40 ms debounce window plus the rebuild time).
      const swapBase = await makeTempDir();
      try {
        const original = 'original bytes, same length as the secret!\n';
        const secret = `${'SECRET-9d1e outside the root'.padEnd(original.length - 1, '.')}\n`;
        await addToTree(swapBase, {
          'outside/secret.txt': secret,
          'outside-dir/inner.md': secret,
          'skills/t/SKILL.md': skillMd('t', 'Swapped under the server.'),
          'skills/t/swap.txt': original,
          'skills/t/sub/inner.md': original,
        });
        const swapped = await connect(['--no-watch', path.join(swapBase, 'skills')], era);
        try {
          const { skill } = await swapped.skills.get('skill://t/SKILL.md');
          expect(skill.resources === 'dynamic' ? [] : skill.resources.map((resource) => resource.uri).sort()).toEqual([
            'skill://t/SKILL.md',
            'skill://t/sub/inner.md',
            'skill://t/swap.txt',
          ]);
          const target =
            kind === 'file'
              ? path.join(swapBase, 'outside', 'secret.txt')
              : path.join(swapBase, 'outside-dir', 'inner.md');
          utimesSync(target, OLD_ATIME, OLD_MTIME);
          if (kind === 'file') {
            await fsp.rm(path.join(swapBase, 'skills', 't', 'swap.txt'));
            await fsp.symlink(target, path.join(swapBase, 'skills', 't', 'swap.txt'));
          } else {
            await fsp.rm(path.join(swapBase, 'skills', 't', 'sub'), { recursive: true });
            await fsp.symlink(path.dirname(target), path.join(swapBase, 'skills', 't', 'sub'));
          }
          let served: string | undefined;
          try {
            served = JSON.stringify((await swapped.client.readResource({ uri })).contents[0]);
          } catch (error) {
            if (!(error instanceof ProtocolError)) throw error;
            expect(error.code === -32602 || error.code === -32603).toBe(true);
            expect(error.message).not.toContain('SECRET-9d1e');
          }
          expect(served, 'bytes from outside the root were served').toBeUndefined();
          // The published digest does not match, so the bytes are not sent; but were they read? (open() follows links.)
          expect(statSync(target).atimeMs, `${path.relative(swapBase, target)} outside the root was read`).toBe(
            OLD_ATIME.getTime(),
          );
        } finally {
          await swapped.close();
        }
      } finally {
        await removeTree(swapBase);
      }
    },
  );

  it('still serves the legitimate files after all of the above, and nothing outside was read', async () => {
    const text = async (uri: string) =>
      ((await connection.client.readResource({ uri })).contents[0] as { text?: string }).text;
    expect(await text('skill://s/notes.txt')).toBe('notes\n');
    expect(await text('skill://s/sub/inner.md')).toBe('# inner\n');
    // Alternative spellings of a served URI are the same resource (never a different path).
    expect(await text('skill://s/notes%2Etxt')).toBe('notes\n');
    expect(await text('skill://%73/notes.txt')).toBe('notes\n');
    expect(connection.stderr()).not.toContain(SENTINEL_TEXT.trim());
    expectSentinelsUnread();
  });
});
