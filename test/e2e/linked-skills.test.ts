/**
 * The `npx skills` layout: skills live in a store (`.agents/skills/<name>`) and each host's folder holds links to them
 * (`.claude/skills/<name> -> ../../.agents/skills/<name>`). Pointed at such a folder, the server serves every linked
 * skill folder by default, with containment anchored at the link's target: a link inside a linked skill that leaves
 * it is refused (`symlink-outside-root`), and `--symlinks skip` skips the linked folders. Checked over real stdio with
 * the official client verifying every read, and with `check --json`.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { cli } from '../helpers/cli.js';
import { sha256 } from '../helpers/disk.js';
import { connect, type Connection } from '../helpers/server.js';
import { makeTree, removeTree, skillMd } from '../helpers/tree.js';

/** A project with a store of two skills, a host folder linking both, and a secret next to the store. */
async function makeProject(): Promise<{ project: string; hostFolder: string }> {
  const project = await makeTree({
    '.agents/skills/pdf-tools/SKILL.md': skillMd('pdf-tools', 'Fill and merge PDF forms.'),
    '.agents/skills/pdf-tools/references/forms.md': '# Forms\n',
    '.agents/skills/review/SKILL.md': skillMd('review', 'Review a pull request.'),
    'secrets/token.txt': 'not for hosts\n',
    'notes/plain/readme.md': 'a folder that is not a skill\n',
  });
  const hostFolder = path.join(project, '.claude', 'skills');
  await fsp.mkdir(hostFolder, { recursive: true });
  await fsp.symlink(path.join('..', '..', '.agents', 'skills', 'pdf-tools'), path.join(hostFolder, 'pdf-tools'));
  await fsp.symlink(path.join('..', '..', '.agents', 'skills', 'review'), path.join(hostFolder, 'review'));
  // A link out of a linked skill folder (to a file beside the store), and a link to a folder that is not a skill.
  await fsp.symlink(
    path.join('..', '..', '..', 'secrets', 'token.txt'),
    path.join(project, '.agents', 'skills', 'review', 'token.txt'),
  );
  await fsp.symlink(path.join('..', '..', 'notes', 'plain'), path.join(hostFolder, 'plain'));
  return { project, hostFolder };
}

function check(args: readonly string[]): {
  status: number | null;
  report: { skills: { uri: string }[]; diagnostics: { rule: string; file: string; message: string }[] };
} {
  const result = cli(['check', '--json', ...args]);
  return { status: result.status, report: JSON.parse(result.stdout) as never };
}

describe('linked skill folders (the npx skills layout)', () => {
  let connection: Connection | undefined;
  let project: string | undefined;
  afterEach(async () => {
    await connection?.close();
    connection = undefined;
    if (project !== undefined) await removeTree(project);
  });

  it('serves each linked skill folder as that skill, every file verified, and refuses a link that leaves it', async () => {
    const made = await makeProject();
    project = made.project;
    connection = await connect([made.hostFolder]);
    const { skills } = await connection.skills.list();
    expect(
      skills.map((skill) => [
        skill.uri,
        skill.resources === 'dynamic' ? [] : skill.resources.map((resource) => resource.uri),
      ]),
    ).toEqual([
      ['skill://pdf-tools/SKILL.md', ['skill://pdf-tools/SKILL.md', 'skill://pdf-tools/references/forms.md']],
      ['skill://review/SKILL.md', ['skill://review/SKILL.md']],
    ]);
    const forms = await connection.skills.read(skills[0]!, 'skill://pdf-tools/references/forms.md');
    expect(sha256(Buffer.from(forms.bytes))).toBe(sha256('# Forms\n'));
    await expect(connection.skills.read(skills[1]!, 'skill://review/token.txt')).rejects.toThrow();

    const { status, report } = check([made.hostFolder]);
    expect(status).toBe(0);
    expect(report.diagnostics.map((diagnostic) => [diagnostic.rule, diagnostic.file])).toEqual([
      ['symlink-outside-root', path.join(made.hostFolder, 'plain')],
      ['symlink-outside-root', path.join(made.hostFolder, 'review', 'token.txt')],
    ]);
    expect(report.diagnostics[1]?.message).toBe(
      `symlink points outside the linked skill folder ${path.join(made.project, '.agents', 'skills', 'review')} and was not followed`,
    );
  });

  it('skips the linked folders with --symlinks skip', async () => {
    const made = await makeProject();
    project = made.project;
    const { status, report } = check(['--symlinks', 'skip', made.hostFolder]);
    expect(status).toBe(0);
    expect(report.skills).toEqual([]);
    expect(report.diagnostics.map((diagnostic) => [diagnostic.rule, diagnostic.file])).toEqual([
      ['symlink-skipped', path.join(made.hostFolder, 'pdf-tools')],
      ['symlink-skipped', path.join(made.hostFolder, 'plain')],
      ['symlink-skipped', path.join(made.hostFolder, 'review')],
    ]);
  });
});
