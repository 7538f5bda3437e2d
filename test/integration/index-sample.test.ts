/**
 * Index build over the repository's `sample-skills` tree (real directory, read only): skills, resources with
 * digests of the bytes on disk, nested skills, grouping directories and directory listings.
 */
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { entryOf } from '../../src/index/entry.js';
import { digestOf } from '../../src/index/record.js';
import { findDirectory, findFile, findSkill } from '../../src/index/snapshot.js';
import type { Snapshot } from '../../src/index/types.js';
import { diskCatalog, diskFiles, fileOnDisk, fileUrisOf } from '../helpers/disk.js';
import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { SAMPLE_SKILLS_DIR } from '../helpers/tree.js';
import {
  buildOne,
  childrenOf,
  directoryUris,
  expectSnapshotMatchesDisk,
  namespaceFileUris,
  resourcesOf,
  servedFileUris,
  skillsListing,
  skillUris,
} from './snapshot.js';

const ROOT = path.resolve(SAMPLE_SKILLS_DIR);
const DIRECTORY = 'inode/directory';

/** Skill path → host directory, for every sample skill. */
const SKILL_DIRS: Record<string, string> = {
  'acme/billing/refunds': 'acme/billing/refunds',
  'acme/support/refunds': 'acme/support/refunds',
  'data-pipeline': 'data-pipeline',
  'data-pipeline/csv-cleaning': 'data-pipeline/csv-cleaning',
  'pdf-summaries': 'pdf-summaries',
  'report-writer': 'report-writer',
};

describe('buildSnapshot over sample-skills', () => {
  let snapshot: Snapshot;
  beforeAll(async () => {
    snapshot = await buildOne(ROOT);
  });

  it('serves exactly the six sample skills, sorted by SKILL.md URI, with no diagnostics', () => {
    expect(skillUris(snapshot)).toEqual(SAMPLE_SKILL_URIS);
    expect([...snapshot.skills.keys()].sort()).toEqual(skillUris(snapshot));
    expect(snapshot.diagnostics).toEqual([]);
    expect(snapshot.generation).toBe(1);
  });

  it.each(Object.entries(SKILL_DIRS))(
    '%s lists every file under its folder with the digest and size on disk',
    async (skillPath, rel) => {
      const skill = findSkill(snapshot, `skill://${skillPath}/SKILL.md`);
      expect(skill?.rootUri).toBe(`skill://${skillPath}`);
      expect(skill?.segments).toEqual(skillPath.split('/'));
      expect(skill?.dirReal).toBe(path.join(ROOT, rel));
      expect(skill?.rootIndex).toBe(0);
      expect(resourcesOf(skill)).toEqual(diskFiles(path.join(ROOT, rel), `skill://${skillPath}`));
      expect(skill?.manifestSize).toBe(fileOnDisk('', path.join(ROOT, rel, 'SKILL.md')).size);
    },
  );

  it('lists the nested csv-cleaning files, its SKILL.md included, among data-pipeline resources', async () => {
    const uris = resourcesOf(findSkill(snapshot, 'skill://data-pipeline/SKILL.md')).map((row) => row.uri);
    expect(uris).toEqual([
      'skill://data-pipeline/SKILL.md',
      'skill://data-pipeline/csv-cleaning/SKILL.md',
      'skill://data-pipeline/csv-cleaning/references/encodings.md',
      'skill://data-pipeline/scripts/validate.py',
    ]);
    const nested = resourcesOf(findSkill(snapshot, 'skill://data-pipeline/csv-cleaning/SKILL.md'));
    expect(nested.map((row) => row.uri)).toEqual([
      'skill://data-pipeline/csv-cleaning/SKILL.md',
      'skill://data-pipeline/csv-cleaning/references/encodings.md',
    ]);
    expect(findFile(snapshot, 'skill://data-pipeline/csv-cleaning/references/encodings.md')?.top.uri).toBe(
      'skill://data-pipeline/SKILL.md',
    );
    expect(skillsListing(snapshot, 'skill://data-pipeline/csv-cleaning/references/encodings.md')).toEqual([
      'skill://data-pipeline/SKILL.md',
      'skill://data-pipeline/csv-cleaning/SKILL.md',
    ]);
  });

  it('serves every file exactly once, with the digest and size of the real file', async () => {
    const expected = fileUrisOf(diskCatalog(ROOT));
    expect(servedFileUris(snapshot)).toEqual(expected);
    expect(namespaceFileUris(snapshot)).toEqual(expected);
    expect(snapshot.fileCount).toBe(expected.length);
    expectSnapshotMatchesDisk(snapshot);
    const logo = findFile(snapshot, 'skill://report-writer/assets/logo.png');
    expect(logo?.path).toBe(path.join(ROOT, 'report-writer/assets/logo.png'));
    expect(logo?.mimeType).toBe('image/png');
    expect(
      logo === undefined ? undefined : { uri: logo.uri, digest: digestOf(logo.node), size: logo.node.size },
    ).toEqual(fileOnDisk('skill://report-writer/assets/logo.png', path.join(ROOT, 'report-writer/assets/logo.png')));
  });

  it('publishes frontmatter verbatim (folded, literal, metadata)', () => {
    const support = findSkill(snapshot, 'skill://acme/support/refunds/SKILL.md');
    expect(support === undefined ? undefined : entryOf(support).frontmatter).toEqual({
      name: 'refunds',
      description:
        'Handle customer refund requests in Acme support conversations - acknowledge the request, gather the details billing needs, set honest expectations on timing, and write the reply. Use when a customer asks for their money back, disputes a charge, or asks where their refund is.',
      license: 'Proprietary',
      metadata: { team: 'support' },
    });
    const report = findSkill(snapshot, 'skill://report-writer/SKILL.md');
    expect(report?.name).toBe('report-writer');
    expect(report?.description.endsWith('wants it ready to share.\n')).toBe(true);
  });

  it('lists the grouping directories skill://acme and skill://acme/billing', () => {
    expect(childrenOf(snapshot, 'skill://acme')).toEqual([
      { uri: 'skill://acme/billing', name: 'billing', mimeType: DIRECTORY },
      { uri: 'skill://acme/support', name: 'support', mimeType: DIRECTORY },
    ]);
    expect(childrenOf(snapshot, 'skill://acme/billing')).toEqual([
      { uri: 'skill://acme/billing/refunds', name: 'refunds', mimeType: DIRECTORY },
    ]);
    expect(childrenOf(snapshot, 'skill://acme/support')).toEqual([
      { uri: 'skill://acme/support/refunds', name: 'refunds', mimeType: DIRECTORY },
    ]);
  });

  it('lists skill://report-writer/templates: report.md with its size, and sections as a directory', async () => {
    const report = fileOnDisk('', path.join(ROOT, 'report-writer/templates/report.md'));
    expect(childrenOf(snapshot, 'skill://report-writer/templates')).toEqual([
      {
        uri: 'skill://report-writer/templates/report.md',
        name: 'report.md',
        mimeType: 'text/markdown',
        size: report.size,
      },
      { uri: 'skill://report-writer/templates/sections', name: 'sections', mimeType: DIRECTORY },
    ]);
    const summary = fileOnDisk('', path.join(ROOT, 'report-writer/templates/sections/executive-summary.md'));
    expect(childrenOf(snapshot, 'skill://report-writer/templates/sections')).toEqual([
      {
        uri: 'skill://report-writer/templates/sections/executive-summary.md',
        name: 'executive-summary.md',
        mimeType: 'text/markdown',
        size: summary.size,
      },
    ]);
  });

  it('has a directory resource for exactly the skill folders, their subfolders and the grouping folders', () => {
    expect(directoryUris(snapshot)).toEqual([
      'skill://acme',
      'skill://acme/billing',
      'skill://acme/billing/refunds',
      'skill://acme/billing/refunds/references',
      'skill://acme/support',
      'skill://acme/support/refunds',
      'skill://data-pipeline',
      'skill://data-pipeline/csv-cleaning',
      'skill://data-pipeline/csv-cleaning/references',
      'skill://data-pipeline/scripts',
      'skill://pdf-summaries',
      'skill://report-writer',
      'skill://report-writer/assets',
      'skill://report-writer/references',
      'skill://report-writer/templates',
      'skill://report-writer/templates/sections',
    ]);
    expect(findDirectory(snapshot, 'skill://report-writer/SKILL.md')).toBeUndefined();
    expect(findDirectory(snapshot, 'skill://nope')).toBeUndefined();
  });

  it('answers lookups for any spelling of a served URI and nothing else', () => {
    expect(findSkill(snapshot, 'skill://pdf-summaries/%53KILL.md')?.uri).toBe('skill://pdf-summaries/SKILL.md');
    expect(findSkill(snapshot, 'skill://pdf-summaries/skill.md')).toBeUndefined();
    expect(findSkill(snapshot, 'skill://acme/SKILL.md')).toBeUndefined();
    expect(findSkill(snapshot, 'skill://pdf-summaries/../report-writer/SKILL.md')).toBeUndefined();
    const script = findFile(snapshot, 'skill://data-pipeline/scripts/validate.py');
    expect(script === undefined ? undefined : digestOf(script.node)).toMatch(/^sha256:[0-9a-f]{64}$/u);
    expect(findFile(snapshot, 'skill://data-pipeline/scripts/%76alidate.py')?.uri).toBe(
      'skill://data-pipeline/scripts/validate.py',
    );
    expect(findFile(snapshot, 'skill://data-pipeline/scripts')).toBeUndefined();
  });
});
