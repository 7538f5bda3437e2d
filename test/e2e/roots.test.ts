/**
 * Several roots and `prefix=dir` over the built CLI: prefixed roots served under `skill://<prefix>/…` and read back
 * byte for byte over stdio in both eras; a prefixed root that is itself a skill; conflicts between roots (the
 * first root listed wins, with one `skill-path-conflict` diagnostic naming the losing copy on serve's stderr, and
 * naming both roots in `check`); malformed prefixes refused with exit 2.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { diskFiles } from '../helpers/disk.js';
import { eventsOf, type LogLine, logLines, waitForEvent } from '../helpers/logs.js';
import { connect, type Connection, ERAS } from '../helpers/server.js';
import { skillMd, tempTrees } from '../helpers/tree.js';

/** `path` as typed on a command line run from this process's working directory (the spawned server inherits it). */
function relativeArg(abs: string): string {
  const rel = path.relative(process.cwd(), abs);
  return rel.startsWith('..') ? rel : `./${rel}`;
}

const temps = tempTrees();
const { tree } = temps;
let connection: Connection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  await temps.removeAll();
});

/** Resolves once the server logged its first index (the `index-built` event), then returns every stderr log line. */
async function logsAfterIndex(conn: Connection, timeoutMs = 10_000): Promise<LogLine[]> {
  await waitForEvent(() => conn.stderr(), 'index-built', {}, { timeoutMs });
  return logLines(conn.stderr());
}

/** The `skill-path-conflict` diagnostics logged by the first index. */
async function conflictsLogged(conn: Connection): Promise<LogLine[]> {
  return eventsOf(await logsAfterIndex(conn), 'diagnostic', { rule: 'skill-path-conflict' });
}

/** Reads every listed file of every skill through SkillsClient (verified), comparing bytes with `diskOf(uri)`. */
async function readAll(conn: Connection, diskOf: (uri: string) => string): Promise<number> {
  const listing = await conn.skills.list();
  expect(listing.invalid).toEqual([]);
  let count = 0;
  for (const skill of listing.skills) {
    if (!Array.isArray(skill.resources)) throw new Error('resources must be a list');
    for (const row of skill.resources) {
      const file = await conn.skills.read(skill, row.uri);
      expect(file.verified).toBe(true);
      expect(Buffer.from(file.bytes).equals(readFileSync(diskOf(row.uri)))).toBe(true);
      count++;
    }
    const manifest = await conn.skills.read(skill);
    expect(manifest.frontmatter).toEqual(skill.frontmatter);
  }
  return count;
}

const CONFLICT_HINT = 'mount one of the roots under a prefix (prefix=dir) or rename one of the skills';

describe.each([ERAS[1], ERAS[2]])('prefixed roots over stdio ($label)', (era) => {
  it('`./team acme/billing=./billing` serves the second root under skill://acme/billing/…', async () => {
    const parent = await tree({
      'team/alpha/SKILL.md': skillMd('alpha', 'Team alpha.'),
      'team/alpha/notes.md': 'alpha notes\n',
      'billing/refunds/SKILL.md': skillMd('refunds', 'Billing refunds.', 'license: MIT'),
      'billing/refunds/references/policy.md': '# Policy\n\nRefund within 30 days.\n',
      'billing/invoices/SKILL.md': skillMd('invoices', 'Billing invoices.'),
    });
    const team = path.join(parent, 'team');
    const billing = path.join(parent, 'billing');
    connection = await connect([relativeArg(team), `acme/billing=${relativeArg(billing)}`], era);
    expect(connection.client.getNegotiatedProtocolVersion()).toBe(era.label);

    const listing = await connection.skills.list();
    expect(listing.invalid).toEqual([]);
    expect(JSON.parse(JSON.stringify(listing.skills))).toStrictEqual([
      {
        uri: 'skill://acme/billing/invoices/SKILL.md',
        frontmatter: { name: 'invoices', description: 'Billing invoices.' },
        resources: diskFiles(path.join(billing, 'invoices'), 'skill://acme/billing/invoices'),
      },
      {
        uri: 'skill://acme/billing/refunds/SKILL.md',
        frontmatter: { name: 'refunds', description: 'Billing refunds.', license: 'MIT' },
        resources: diskFiles(path.join(billing, 'refunds'), 'skill://acme/billing/refunds'),
      },
      {
        uri: 'skill://alpha/SKILL.md',
        frontmatter: { name: 'alpha', description: 'Team alpha.' },
        resources: diskFiles(path.join(team, 'alpha'), 'skill://alpha'),
      },
    ]);

    const files = await readAll(connection, (uri) => {
      const rel = uri.slice('skill://'.length);
      return rel.startsWith('acme/billing/')
        ? path.join(billing, rel.slice('acme/billing/'.length))
        : path.join(team, rel);
    });
    expect(files).toBe(5);

    // The prefix is browsable as grouping directories.
    expect(connection.skills.directoryRead).toBe(true);
    expect((await connection.skills.readDirectory('skill://acme')).resources).toEqual([
      { uri: 'skill://acme/billing', name: 'billing', mimeType: 'inode/directory' },
    ]);
    expect((await connection.skills.readDirectory('skill://acme/billing')).resources).toEqual([
      { uri: 'skill://acme/billing/invoices', name: 'invoices', mimeType: 'inode/directory' },
      { uri: 'skill://acme/billing/refunds', name: 'refunds', mimeType: 'inode/directory' },
    ]);
    const logs = await logsAfterIndex(connection);
    expect(eventsOf(logs, 'diagnostic')).toEqual([]);
  });

  it('`tools=./my-skill` (a root that is itself a skill) is served as skill://tools/my-skill/SKILL.md', async () => {
    const parent = await tree({
      'my-skill/SKILL.md': skillMd('my-skill', 'A root that is a skill.'),
      'my-skill/references/a.md': 'A\n',
      'my-skill/scripts/run.sh': '#!/bin/sh\necho hi\n',
    });
    const dir = path.join(parent, 'my-skill');
    connection = await connect([`tools=${relativeArg(dir)}`], era);
    const listing = await connection.skills.list();
    expect(JSON.parse(JSON.stringify(listing.skills))).toStrictEqual([
      {
        uri: 'skill://tools/my-skill/SKILL.md',
        frontmatter: { name: 'my-skill', description: 'A root that is a skill.' },
        resources: diskFiles(dir, 'skill://tools/my-skill'),
        // scripts/run.sh (a shebang under scripts/) is executable content, flagged under this project's own key.
        _meta: { 'dev.skills-serve/executables': { 'scripts/run.sh': ['scripts', 'shebang'] } },
      },
    ]);
    expect(await readAll(connection, (uri) => path.join(dir, uri.slice('skill://tools/my-skill/'.length)))).toBe(3);
  });

  it('two roots publishing the same skill path: the first listed wins, served from its bytes, one diagnostic', async () => {
    const first = await tree({
      'dup/SKILL.md': skillMd('dup', "The first root's dup."),
      'dup/a.md': 'from the first root\n',
    });
    const second = await tree({
      'dup/SKILL.md': skillMd('dup', "The second root's dup, a longer text."),
      'dup/b.md': 'from the second root\n',
      'other/SKILL.md': skillMd('other', 'Only in the second root.'),
    });
    connection = await connect([first, second], era);
    const listing = await connection.skills.list();
    expect(listing.skills.map((skill) => skill.uri)).toEqual(['skill://dup/SKILL.md', 'skill://other/SKILL.md']);
    const dup = listing.skills[0];
    if (dup === undefined) throw new Error('unreachable');
    expect(dup.frontmatter).toEqual({ name: 'dup', description: "The first root's dup." });
    expect(dup.resources).toEqual(diskFiles(path.join(first, 'dup'), 'skill://dup'));
    const manifest = await connection.skills.read(dup);
    expect(Buffer.from(manifest.bytes).equals(readFileSync(path.join(first, 'dup/SKILL.md')))).toBe(true);
    const a = await connection.skills.read(dup, 'a.md');
    expect(Buffer.from(a.bytes).toString('utf8')).toBe('from the first root\n');
    await expect(connection.client.readResource({ uri: 'skill://dup/b.md' })).rejects.toThrow();

    const conflicts = await conflictsLogged(connection);
    expect(conflicts).toHaveLength(1);
    // The losing copy is named (and left out); the text naming both roots is checked where a user reads it, in `check`.
    expect(conflicts[0]).toMatchObject({
      level: 30,
      rule: 'skill-path-conflict',
      severity: 'error',
      file: path.join(second, 'dup'),
      hint: CONFLICT_HINT,
      skipped: 'skill',
      winner: 'dup',
    });
  });
});

describe('conflicts between roots', () => {
  it('listing the roots the other way round makes the other root win', async () => {
    const first = await tree({ 'dup/SKILL.md': skillMd('dup', 'One.'), 'dup/a.md': 'A\n' });
    const second = await tree({ 'dup/SKILL.md': skillMd('dup', 'Two.'), 'dup/b.md': 'B\n' });
    connection = await connect([second, first], ERAS[2]);
    const [dup] = (await connection.skills.list()).skills;
    expect(dup?.frontmatter).toEqual({ name: 'dup', description: 'Two.' });
    expect(dup?.resources).toEqual(diskFiles(path.join(second, 'dup'), 'skill://dup'));
    const conflicts = await conflictsLogged(connection);
    expect(conflicts).toMatchObject([
      {
        rule: 'skill-path-conflict',
        severity: 'error',
        file: path.join(first, 'dup'),
        skipped: 'skill',
        winner: 'dup',
      },
    ]);
  });

  it('`check` reports the same conflict: exit 1, the winner served, one error naming both roots', async () => {
    const parent = await tree({
      'one/dup/SKILL.md': skillMd('dup', 'One.'),
      'two/dup/SKILL.md': skillMd('dup', 'Two!'),
      'two/other/SKILL.md': skillMd('other', 'Other.'),
    });
    const one = path.join(parent, 'one');
    const two = path.join(parent, 'two');
    const size = (rel: string): number => statSync(path.join(parent, rel)).size;
    expect(cli(['check', './one', './two'], parent)).toEqual({
      status: 1,
      stderr: '',
      stdout: [
        `ok      skill://dup/SKILL.md    1 file, ${size('one/dup/SKILL.md')} bytes`,
        `ok      skill://other/SKILL.md  1 file, ${size('two/other/SKILL.md')} bytes`,
        '',
        `error   two/dup: skill path "dup" from root ${two} overlaps "dup" from root ${one}, which is listed first and wins [skill-path-conflict]`,
        `        fix: ${CONFLICT_HINT}`,
        '',
        '2 skills served, 1 left out, 0 warnings',
        '',
      ].join('\n'),
    });
    const json = JSON.parse(cli(['check', '--json', './one', './two'], parent).stdout) as { diagnostics: unknown[] };
    expect(json.diagnostics).toStrictEqual([
      {
        severity: 'error',
        rule: 'skill-path-conflict',
        file: path.join(two, 'dup'),
        message: `skill path "dup" from root ${two} overlaps "dup" from root ${one}, which is listed first and wins`,
        hint: CONFLICT_HINT,
        winner: 'dup',
      },
    ]);
  });

  it("a later root's skill inside an earlier root's skill (outer vs outer/inner) is left out", async () => {
    const parent = await tree({
      'first/outer/SKILL.md': skillMd('outer', 'Outer.'),
      'first/outer/o.md': 'o\n',
      'second/outer/inner/SKILL.md': skillMd('inner', 'Inner.'),
      'second/outer/inner/i.md': 'i\n',
    });
    const first = path.join(parent, 'first');
    const second = path.join(parent, 'second');
    const run = cli(['check', './first', './second'], parent);
    expect(run.status).toBe(1);
    expect(run.stdout.split('\n').slice(0, 5)).toEqual([
      `ok      skill://outer/SKILL.md  2 files, ${statSync(path.join(first, 'outer/SKILL.md')).size + 2} bytes`,
      '',
      `error   second/outer/inner: skill path "outer/inner" from root ${second} overlaps "outer" from root ${first}, which is listed first and wins [skill-path-conflict]`,
      `        fix: ${CONFLICT_HINT}`,
      '',
    ]);

    connection = await connect([first, second], ERAS[1]);
    const listing = await connection.skills.list();
    expect(listing.skills.map((skill) => skill.uri)).toEqual(['skill://outer/SKILL.md']);
    expect(listing.skills[0]?.resources).toEqual(diskFiles(path.join(first, 'outer'), 'skill://outer'));
    await expect(connection.client.readResource({ uri: 'skill://outer/inner/i.md' })).rejects.toThrow();
    const conflicts = await conflictsLogged(connection);
    expect(conflicts.map((line) => line['file'])).toEqual([path.join(second, 'outer', 'inner')]);
  });

  it("a later root's skill enclosing an earlier root's skill (acme vs acme/billing/refunds) is left out", async () => {
    const parent = await tree({
      'first/acme/billing/refunds/SKILL.md': skillMd('refunds', 'Refunds.'),
      'second/acme/SKILL.md': skillMd('acme', 'Everything Acme.'),
      'second/acme/notes.md': 'n\n',
      'second/zeta/SKILL.md': skillMd('zeta', 'Zeta.'),
    });
    const first = path.join(parent, 'first');
    const second = path.join(parent, 'second');
    const run = cli(['check', '--json', './first', './second'], parent);
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout) as { skills: { uri: string }[]; diagnostics: unknown[]; summary: unknown };
    expect(report.skills.map((skill) => skill.uri)).toEqual([
      'skill://acme/billing/refunds/SKILL.md',
      'skill://zeta/SKILL.md',
    ]);
    expect(report.diagnostics).toStrictEqual([
      {
        severity: 'error',
        rule: 'skill-path-conflict',
        file: path.join(second, 'acme'),
        message: `skill path "acme" from root ${second} overlaps "acme/billing/refunds" from root ${first}, which is listed first and wins`,
        hint: CONFLICT_HINT,
        winner: 'acme/billing/refunds',
      },
    ]);
    expect(report.summary).toEqual({ served: 2, leftOut: 1, warnings: 0, info: 0 });
  });

  it('skills that only share a grouping directory across roots do not conflict', async () => {
    const parent = await tree({
      'first/acme/billing/refunds/SKILL.md': skillMd('refunds', 'Billing refunds.'),
      'second/acme/support/refunds/SKILL.md': skillMd('refunds', 'Support refunds.'),
    });
    const run = cli(['check', '--json', './first', './second'], parent);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as { skills: { uri: string }[]; diagnostics: unknown[] };
    expect(report.skills.map((skill) => skill.uri)).toEqual([
      'skill://acme/billing/refunds/SKILL.md',
      'skill://acme/support/refunds/SKILL.md',
    ]);
    expect(report.diagnostics).toEqual([]);
  });

  it('a prefixed root-skill conflicts with the same path published by a later root', async () => {
    const parent = await tree({
      'my-skill/SKILL.md': skillMd('my-skill', 'Mounted.'),
      'toolbox/tools/my-skill/SKILL.md': skillMd('my-skill', 'From the toolbox.'),
    });
    const run = cli(['check', '--json', 'tools=./my-skill', './toolbox'], parent);
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout) as { skills: { uri: string }[]; diagnostics: unknown[] };
    expect(report.skills.map((skill) => skill.uri)).toEqual(['skill://tools/my-skill/SKILL.md']);
    expect(report.diagnostics).toStrictEqual([
      {
        severity: 'error',
        rule: 'skill-path-conflict',
        file: path.join(parent, 'toolbox', 'tools', 'my-skill'),
        message: `skill path "tools/my-skill" from root ${path.join(parent, 'toolbox')} overlaps "tools/my-skill" from root ${path.join(parent, 'my-skill')}, which is listed first and wins`,
        hint: CONFLICT_HINT,
        winner: 'tools/my-skill',
      },
    ]);
  });

  it('the same directory under two prefixes is served twice, without conflict', async () => {
    const parent = await tree({ 'shared/alpha/SKILL.md': skillMd('alpha', 'Alpha.') });
    const run = cli(['check', '--json', 'a=./shared', 'b=./shared'], parent);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as { skills: { uri: string }[]; diagnostics: unknown[] };
    expect(report.skills.map((skill) => skill.uri)).toEqual(['skill://a/alpha/SKILL.md', 'skill://b/alpha/SKILL.md']);
    expect(report.diagnostics).toEqual([]);
  });
});

describe('malformed root arguments', () => {
  const message = (arg: string): string =>
    `skills-serve: root "${arg}" must be a directory or prefix=directory, with a prefix of non-empty "/"-separated names (e.g. acme/billing=./skills)\n`;

  it.each(['=./dir', 'a//b=./dir', 'a=', 'a/=./dir'])('%j → exit 2 for serve, check and manifest', async (arg) => {
    const cwd = await tree({ 'dir/alpha/SKILL.md': skillMd('alpha', 'Alpha.') });
    for (const command of [[], ['serve'], ['check'], ['manifest']]) {
      expect(cli([...command, arg], cwd)).toEqual({ status: 2, stdout: '', stderr: message(arg) });
    }
    // Also when a valid root comes first.
    expect(cli(['check', './dir', arg], cwd)).toEqual({ status: 2, stdout: '', stderr: message(arg) });
  });

  it.each(['../x=./dir', './x=./dir', '/a=./dir'])(
    '%j starts like a path, so it is one directory (holding "="), missing here → exit 1',
    async (arg) => {
      const cwd = await tree({ 'dir/alpha/SKILL.md': skillMd('alpha', 'Alpha.') });
      expect(cli(['check', arg], cwd)).toEqual({
        status: 1,
        stdout: '',
        stderr: `skills-serve: skills root ${path.resolve(cwd, arg)} cannot be used (it does not exist)\n`,
      });
    },
  );

  it('a well-formed prefix whose directory is missing → exit 1 naming the absolute path', async () => {
    const cwd = await tree({ 'dir/alpha/SKILL.md': skillMd('alpha', 'Alpha.') });
    for (const command of [[], ['check'], ['manifest']]) {
      expect(cli([...command, 'acme=./missing'], cwd)).toEqual({
        status: 1,
        stdout: '',
        stderr: `skills-serve: skills root ${path.join(cwd, 'missing')} cannot be used (it does not exist)\n`,
      });
    }
  });

  it('`check` resolves relative prefixed roots against its working directory', async () => {
    const cwd = await tree({ 'dir/alpha/SKILL.md': skillMd('alpha', 'Alpha.') });
    const run = cli(['check', 'acme/billing=dir'], cwd);
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe(
      `ok      skill://acme/billing/alpha/SKILL.md  1 file, ${statSync(path.join(cwd, 'dir/alpha/SKILL.md')).size} bytes`,
    );
  });
});
