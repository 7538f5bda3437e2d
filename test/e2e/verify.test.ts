/**
 * Every served file of every tree verifies with the host-side SkillsClient (size, digest, frontmatter) in every
 * era, over the real stdio transport of the built CLI; the bytes read equal the bytes on disk.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { SAMPLE_SKILL_URIS } from '../helpers/sample.js';
import { connect, type Connection, ERAS, FIXTURES, REPO, SAMPLE_SKILLS } from '../helpers/server.js';

const CORPUS = path.resolve(REPO, '..', 'shared', 'corpora', 'anthropics-skills', 'skills');

/** Trees to serve, the exact skills they publish, and how a URI's path maps back onto disk. */
const TREES: { name: string; root: string; skills: readonly string[]; rootIsSkill?: boolean }[] = [
  {
    name: 'sample-skills',
    root: SAMPLE_SKILLS,
    skills: SAMPLE_SKILL_URIS,
  },
  {
    name: 'encoding',
    root: path.join(FIXTURES, 'encoding'),
    skills: [
      'skill://block-scalars/SKILL.md',
      'skill://bom-skill/SKILL.md',
      'skill://crlf-skill/SKILL.md',
      'skill://folded/SKILL.md',
    ],
  },
  { name: 'names', root: path.join(FIXTURES, 'names'), skills: ['skill://odd-names/SKILL.md'] },
  {
    name: 'nested',
    root: path.join(FIXTURES, 'nested'),
    skills: ['skill://outer/SKILL.md', 'skill://outer/inner/SKILL.md', 'skill://outer/inner/deepest/SKILL.md'],
  },
  {
    name: 'root-skill',
    root: path.join(FIXTURES, 'root-skill'),
    skills: ['skill://root-skill/SKILL.md'],
    rootIsSkill: true,
  },
  { name: 'invalid', root: path.join(FIXTURES, 'invalid'), skills: ['skill://good/SKILL.md'] },
];

if (existsSync(CORPUS)) {
  TREES.push({
    name: 'anthropics-skills corpus',
    root: CORPUS,
    skills: [
      'algorithmic-art',
      'brand-guidelines',
      'canvas-design',
      'frontend-design',
      'internal-comms',
      'mcp-builder',
      'skill-creator',
      'slack-gif-creator',
      'theme-factory',
      'web-artifacts-builder',
      'webapp-testing',
    ].map((name) => `skill://${name}/SKILL.md`),
  });
}

/** The host path a served URI stands for, derived independently of the server's index. */
function diskPathOf(tree: (typeof TREES)[number], uri: string): string {
  const segments = uri
    .slice('skill://'.length)
    .split('/')
    .map((segment) => decodeURIComponent(segment));
  return path.join(tree.rootIsSkill === true ? path.dirname(tree.root) : tree.root, ...segments);
}

let connection: Connection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
});

describe.each(ERAS)('era $label', (era) => {
  it.each(TREES)(
    'serves and verifies every file of $name',
    async (tree) => {
      connection = await connect([tree.root], era);
      expect(connection.client.getNegotiatedProtocolVersion()).toBe(era.label);
      const caps = connection.client.getServerCapabilities();
      expect(caps?.extensions?.['io.modelcontextprotocol/skills']).toEqual({ directoryRead: true });
      expect(caps?.resources).toBeDefined();

      const listing = await connection.skills.list();
      expect(listing.invalid).toEqual([]);
      expect(listing.skills.map((skill) => skill.uri)).toEqual(tree.skills);

      let files = 0;
      for (const skill of listing.skills) {
        if (!Array.isArray(skill.resources)) throw new Error('a directory-backed server never publishes "dynamic"');
        const uris = skill.resources.map((resource) => resource.uri);
        expect(new Set(uris).size).toBe(uris.length);
        expect(uris).toContain(skill.uri);
        for (const resource of skill.resources) {
          const file = await connection.skills.read(skill, resource.uri);
          expect(file.verified).toBe(true);
          expect(Buffer.from(file.bytes).equals(readFileSync(diskPathOf(tree, resource.uri)))).toBe(true);
          files++;
        }
        const manifest = await connection.skills.read(skill);
        expect(manifest.frontmatter).toEqual(skill.frontmatter);
        expect(manifest.mimeType).toBe('text/markdown');
      }
      expect(files).toBeGreaterThan(0);
    },
    60_000,
  );
});
