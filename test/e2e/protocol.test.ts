/**
 * The wire surface over real stdio: skills/get, resources/list, resources/read (text vs blob), directory reads,
 * pagination and errors, in every era.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { connect, type Connection, ERAS, errorCodeOf, FIXTURES, rawRequest, SAMPLE_SKILLS } from '../helpers/server.js';

let connection: Connection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
});

describe.each(ERAS)('era $label', (era) => {
  it('answers skills/get for every listed skill with the listed entry, and -32602 for anything else', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const { skills } = await connection.skills.list();
    for (const skill of skills) expect((await connection.skills.get(skill.uri)).skill).toEqual(skill);
    for (const uri of [
      'skill://report-writer/references/style-guide.md',
      'skill://report-writer',
      'skill://acme/SKILL.md',
      'skill://nope/SKILL.md',
      'file:///etc/passwd',
      'skill://report-writer/../pdf-summaries/SKILL.md',
    ]) {
      expect(await errorCodeOf(rawRequest(connection, 'skills/get', { uri }))).toBe(-32602);
    }
  });

  it('--resources skills lists one resource per SKILL.md with name, description (on one line), mimeType and size', async () => {
    connection = await connect([SAMPLE_SKILLS, '--resources', 'skills'], era);
    const { resources } = await connection.client.listResources();
    const { skills } = await connection.skills.list();
    expect(resources.map((resource) => resource.uri)).toEqual(skills.map((skill) => skill.uri));
    const billing = resources.find((resource) => resource.uri === 'skill://acme/billing/refunds/SKILL.md');
    expect(billing).toMatchObject({
      name: 'refunds',
      mimeType: 'text/markdown',
      size: readFileSync(path.join(SAMPLE_SKILLS, 'acme/billing/refunds/SKILL.md')).length,
      description: skills
        .find((skill) => skill.uri === billing?.uri)
        ?.frontmatter.description.replace(/\s+/gu, ' ')
        .trim(),
    });
  });

  it('reads text losslessly (BOM kept) and everything else as a base64 blob', async () => {
    const root = path.join(FIXTURES, 'encoding');
    connection = await connect([root], era);
    const read = async (uri: string) =>
      (await connection!.client.readResource({ uri })).contents[0] as Record<string, unknown>;
    const bom = await read('skill://bom-skill/data/bom.txt');
    expect(bom['text']).toBe(readFileSync(path.join(root, 'bom-skill/data/bom.txt'), 'utf8'));
    expect((bom['text'] as string).charCodeAt(0)).toBe(0xfeff);
    expect(bom['mimeType']).toBe('text/plain');
    const latin1 = await read('skill://bom-skill/data/latin1.txt');
    expect(latin1['text']).toBeUndefined();
    expect(Buffer.from(latin1['blob'] as string, 'base64')).toEqual(Buffer.from('caf\xe9\n', 'latin1'));
    const blob = await read('skill://bom-skill/data/blob.bin');
    expect(blob['mimeType']).toBe('application/octet-stream');
    expect(Buffer.from(blob['blob'] as string, 'base64')).toEqual(
      readFileSync(path.join(root, 'bom-skill/data/blob.bin')),
    );
    expect(await read('skill://bom-skill/data/empty.txt')).toEqual({
      uri: 'skill://bom-skill/data/empty.txt',
      mimeType: 'text/plain',
      text: '',
    });
    const crlf = await read('skill://crlf-skill/SKILL.md');
    expect(crlf['text']).toBe(readFileSync(path.join(root, 'crlf-skill/SKILL.md'), 'utf8'));
    expect(crlf['text']).toContain('\r\n');
  });

  it('reads a PNG as an image/png blob and refuses unknown files and directories with -32602', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const png = (await connection.client.readResource({ uri: 'skill://report-writer/assets/logo.png' }))
      .contents[0] as Record<string, unknown>;
    expect(png['mimeType']).toBe('image/png');
    expect(Buffer.from(png['blob'] as string, 'base64')).toEqual(
      readFileSync(path.join(SAMPLE_SKILLS, 'report-writer/assets/logo.png')),
    );
    for (const uri of [
      'skill://report-writer/missing.md',
      'skill://report-writer/references',
      'skill://acme',
      'file:///etc/passwd',
    ]) {
      expect(await errorCodeOf(connection.client.readResource({ uri }))).toBe(-32602);
    }
  });

  it('reads directories: grouping directories, skill roots, subdirectories; -32602 for files and unknown URIs', async () => {
    connection = await connect([SAMPLE_SKILLS], era);
    const children = async (uri: string) =>
      (await connection!.skills.readDirectory(uri)).resources.map((r) => [r.uri, r.mimeType]);
    const dir = 'inode/directory';
    expect(await children('skill://acme')).toEqual([
      ['skill://acme/billing', dir],
      ['skill://acme/support', dir],
    ]);
    expect(await children('skill://acme/billing')).toEqual([['skill://acme/billing/refunds', dir]]);
    expect(await children('skill://report-writer')).toEqual([
      ['skill://report-writer/SKILL.md', 'text/markdown'],
      ['skill://report-writer/assets', dir],
      ['skill://report-writer/references', dir],
      ['skill://report-writer/templates', dir],
    ]);
    expect(await children('skill://report-writer/templates')).toEqual([
      ['skill://report-writer/templates/report.md', 'text/markdown'],
      ['skill://report-writer/templates/sections', dir],
    ]);
    const listed = await connection.skills.readDirectory('skill://report-writer/assets');
    expect(listed.resources).toEqual([
      {
        uri: 'skill://report-writer/assets/logo.png',
        name: 'logo.png',
        mimeType: 'image/png',
        size: readFileSync(path.join(SAMPLE_SKILLS, 'report-writer/assets/logo.png')).length,
      },
    ]);
    for (const uri of [
      'skill://report-writer/SKILL.md',
      'skill://nope',
      'skill://report-writer/nope',
      'skill://acme/billing/refunds/references/policy.md',
    ]) {
      expect(await errorCodeOf(rawRequest(connection, 'resources/directory/read', { uri }))).toBe(-32602);
    }
  });

  it('paginates skills/list and directory reads with --page-size; a bad cursor gets -32602', async () => {
    connection = await connect(['--page-size', '2', SAMPLE_SKILLS], era);
    const uris: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = (await rawRequest(connection, 'skills/list', cursor === undefined ? {} : { cursor })) as unknown as {
        skills: { uri: string }[];
        nextCursor?: string;
      };
      expect(page.skills.length).toBeLessThanOrEqual(2);
      uris.push(...page.skills.map((skill) => skill.uri));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(uris).toEqual((await connection.skills.list()).skills.map((skill) => skill.uri));
    const firstDirPage = (await rawRequest(connection, 'resources/directory/read', {
      uri: 'skill://report-writer',
    })) as unknown as {
      resources: unknown[];
      nextCursor?: string;
    };
    expect(firstDirPage.resources).toHaveLength(2);
    expect(typeof firstDirPage.nextCursor).toBe('string');
    expect((await connection.skills.readDirectory('skill://report-writer')).resources).toHaveLength(4);
    for (const bad of ['garbage!', 'bm9wZQ', '']) {
      expect(await errorCodeOf(rawRequest(connection, 'skills/list', { cursor: bad }))).toBe(-32602);
    }
  });
});
