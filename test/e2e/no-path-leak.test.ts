/**
 * No host path ever reaches the protocol (docs/ARCHITECTURE.md, "Errors": messages name the `skill://` URI, never a host path).
 * A full session over real stdio, in both eras, on a copy of `sample-skills` whose absolute path holds a
 * distinctive marker directory: list, get, read every file, read every directory, the compat tools and prompts, and
 * the error paths (unknown skills/files/directories, bad cursors, wrong types, a file that vanished, a file swapped
 * for a special file, an out-of-root symlink, an invalid skill). Every raw stdout line is kept as it arrived, before
 * any JSON parsing, and none may contain the marker, the root's absolute path or `os.tmpdir()`.
 * stderr may name paths (it is the operator's log) and is expected to.
 */
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Skill } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { converge } from '../helpers/converge.js';
import { eventsOf, hasEvent } from '../helpers/logs.js';
import { ANY_RESULT, connect, type Connection, type Era, ERAS, SAMPLE_SKILLS } from '../helpers/server.js';
import { addToTree, makeTempDir, removeTree, skillMd } from '../helpers/tree.js';

const MARKER = 'LEAKMARKER-q7z3x9';

/** Every way a host path could be spelled in a JSON line. */
function forbiddenSpellings(root: string): string[] {
  const spellings = new Set<string>();
  for (const text of [
    MARKER,
    root,
    path.dirname(root),
    os.tmpdir(),
    '/tmp/',
    SAMPLE_SKILLS,
    path.resolve(SAMPLE_SKILLS, '..'),
  ]) {
    spellings.add(text);
    spellings.add(JSON.stringify(text).slice(1, -1)); // JSON-escaped
    spellings.add(encodeURIComponent(text)); // percent-encoded
    spellings.add(encodeURI(text));
  }
  return [...spellings].filter((spelling) => spelling.length >= 4);
}

describe.each([ERAS[1], ERAS[2]])('no host path on stdout, era $label', (era: Era) => {
  let base: string;
  let root: string;
  let connection: Connection;

  beforeAll(async () => {
    base = await makeTempDir();
    root = path.join(base, MARKER, 'skills');
    await fsp.mkdir(path.dirname(root), { recursive: true });
    await fsp.cp(SAMPLE_SKILLS, root, { recursive: true, verbatimSymlinks: true });
    await addToTree(root, {
      // An invalid skill (diagnostic on stderr), an out-of-root link (warning on stderr), files to vanish and swap.
      'broken/SKILL.md': '---\nname: not-broken\ndescription: name does not match the directory\n---\n',
      'report-writer/references/vanishing.md': '# about to vanish\n',
      'report-writer/references/swapped.md': '# about to become a FIFO\n',
      'report-writer/references/outside-link': { symlink: path.join(base, 'outside.txt') },
    });
    await fsp.writeFile(path.join(base, 'outside.txt'), 'outside\n');
    connection = await connect(['--compat', 'on', '--page-size', '3', root], era, {
      env: { SKILLS_SERVE_LOG_LEVEL: 'debug' },
      keepLines: true,
    });
  });

  afterAll(async () => {
    await connection?.close();
    if (base !== undefined) await removeTree(base);
  });

  async function tryRequest(method: string, params: Record<string, unknown>): Promise<void> {
    await connection.client.request({ method, params }, ANY_RESULT).catch(() => undefined);
  }

  it('runs a full session (success and error paths) and no stdout line names a host path', async () => {
    const { client, skills, wire } = connection;
    // Every page of skills/list, every entry through skills/get, every file through resources/read (verified).
    const all: Skill[] = [];
    let cursor: string | undefined;
    do {
      const page = await skills.list(cursor === undefined ? {} : { cursor });
      all.push(...page.skills);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(all.length).toBeGreaterThanOrEqual(6);
    const directories = new Set<string>();
    for (const skill of all) {
      expect((await skills.get(skill.uri)).skill.uri).toBe(skill.uri);
      for (const resource of skill.resources === 'dynamic' ? [] : skill.resources) {
        if (!resource.uri.endsWith('/vanishing.md') && !resource.uri.endsWith('/swapped.md'))
          await skills.read(skill, resource.uri);
        const segments = resource.uri.slice('skill://'.length).split('/');
        for (let depth = 1; depth < segments.length; depth++)
          directories.add(`skill://${segments.slice(0, depth).join('/')}`);
      }
    }
    // Every directory, every page.
    for (const uri of directories) {
      let dirCursor: string | undefined;
      do {
        const page = (await client.request(
          {
            method: 'resources/directory/read',
            params: dirCursor === undefined ? { uri } : { uri, cursor: dirCursor },
          },
          ANY_RESULT,
        )) as {
          nextCursor?: string;
        };
        dirCursor = page.nextCursor;
      } while (dirCursor !== undefined);
    }
    await client.listResources().catch(() => undefined);
    await client.listResourceTemplates().catch(() => undefined);

    // Compat surfaces: instructions came with initialize; tools and prompts now.
    const { tools } = await client.listTools();
    for (const tool of tools) {
      await client.callTool({ name: tool.name, arguments: {} }).catch(() => undefined);
      await client
        .callTool({ name: tool.name, arguments: { name: 'report-writer', uri: 'skill://report-writer/SKILL.md' } })
        .catch(() => undefined);
      await client
        .callTool({ name: tool.name, arguments: { skill: 'report-writer', path: 'references' } })
        .catch(() => undefined);
      await client
        .callTool({ name: tool.name, arguments: { skill: 'report-writer', path: 'references/nope.md' } })
        .catch(() => undefined);
      await client
        .callTool({ name: tool.name, arguments: { uri: 'skill://report-writer/references/outside-link' } })
        .catch(() => undefined);
      await client.callTool({ name: tool.name, arguments: { cursor: 'bad!' } }).catch(() => undefined);
    }
    await client.callTool({ name: 'no_such_tool', arguments: {} }).catch(() => undefined);
    const prompts = await client.listPrompts().catch(() => ({ prompts: [] as { name: string }[] }));
    for (const prompt of prompts.prompts)
      await client.getPrompt({ name: prompt.name, arguments: {} }).catch(() => undefined);
    await client.getPrompt({ name: 'no-such-prompt', arguments: {} }).catch(() => undefined);

    // Error paths.
    for (const uri of [
      'skill://nope/SKILL.md',
      'skill://report-writer/nope.md',
      'skill://report-writer/references/outside-link',
      'skill://broken/SKILL.md',
      'skill://report-writer/../broken/SKILL.md',
      // (Not a file: URI of the root itself: the error would echo what the client sent, which is no leak.)
      'file:///etc/passwd',
      'skill://report-writer',
      'skill://report-writer/references',
      'skill://report-writer//SKILL.md',
    ]) {
      await tryRequest('resources/read', { uri });
      await tryRequest('skills/get', { uri });
      await tryRequest('resources/directory/read', { uri });
    }
    for (const bad of ['garbage!', 'bm9wZQ', '', 'YWZ0ZXI6c2tpbGw6Ly96enov']) {
      await tryRequest('skills/list', { cursor: bad });
      await tryRequest('resources/directory/read', { uri: 'skill://report-writer', cursor: bad });
      await tryRequest('resources/list', { cursor: bad });
    }
    await tryRequest('resources/read', { uri: 42 });
    await tryRequest('skills/get', { uri: null });
    await tryRequest('no/such/method', {});

    // A file that vanished, and one swapped for a FIFO, after they were listed: read errors and re-indexing.
    await fsp.rm(path.join(root, 'report-writer', 'references', 'vanishing.md'));
    await tryRequest('resources/read', { uri: 'skill://report-writer/references/vanishing.md' });
    await fsp.rm(path.join(root, 'report-writer', 'references', 'swapped.md'));
    execFileSync('mkfifo', [path.join(root, 'report-writer', 'references', 'swapped.md')]);
    await tryRequest('resources/read', { uri: 'skill://report-writer/references/swapped.md' });
    // A new skill and an edit while connected: notifications carry URIs only.
    await addToTree(root, { 'late/SKILL.md': skillMd('late', 'Added while connected.') });
    await fsp.appendFile(path.join(root, 'pdf-summaries', 'SKILL.md'), '\nEdited.\n');
    await converge(connection, root);

    // The session produced a realistic amount of traffic, and stderr did log paths (so the check below means
    // something).
    expect(wire.lines.length).toBeGreaterThan(60);
    const errors = wire.lines.filter((line) => line.includes('"error":{'));
    expect(errors.length).toBeGreaterThan(30);
    const errorBodies = errors.map((line) => JSON.stringify((JSON.parse(line) as { error: unknown }).error));
    for (const uri of [
      'skill://report-writer/references/vanishing.md',
      'skill://report-writer/references/swapped.md',
    ]) {
      expect(errorBodies).toContain(JSON.stringify({ code: -32602, message: `Resource not found: ${uri}` }));
    }
    expect(eventsOf(wire.logs(), 'serving')).toMatchObject([{ transport: 'stdio', roots: [root] }]);
    expect(
      hasEvent(wire.logs(), 'diagnostic', { rule: 'name-mismatch', file: path.join(root, 'broken', 'SKILL.md') }),
    ).toBe(true);
    expect(wire.badLines).toEqual([]);

    const spellings = forbiddenSpellings(root);
    const leaks: string[] = [];
    for (const line of wire.lines) {
      for (const spelling of spellings) {
        const at = line.indexOf(spelling);
        if (at !== -1)
          leaks.push(`${JSON.stringify(spelling)} in …${line.slice(Math.max(0, at - 80), at + spelling.length + 40)}…`);
      }
    }
    expect(leaks).toEqual([]);
  });
});
