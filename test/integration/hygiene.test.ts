/** Hygiene warnings from a real build: the skill stays served, each finding is one warning with its location. */
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';

import { afterEach, expect, it } from 'vitest';

import { buildSnapshot } from '../../src/index/build.js';
import { tempTrees } from '../helpers/tree.js';

const temps = tempTrees();
afterEach(() => temps.removeAll());

it('warns about hidden characters in SKILL.md and secret-looking files, and still serves the skill', async () => {
  const root = await temps.tree({
    's/SKILL.md': '---\nname: s\ndescription: Helpful.\n---\nDo the task.\u200B Then \u{E0041}\u{E0042} stop.\n',
    's/deploy.txt': `Deploy with:\n\n${generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()}`,
    // Documentation that only names the marker is no key.
    's/security.md':
      'Never paste a `-----BEGIN RSA PRIVATE KEY-----` block here.\n```\n-----BEGIN RSA PRIVATE KEY-----\n...\n```\n',
    's/prod.env': 'TOKEN=x\n',
    's/notes.md': 'Nothing to see.\n',
  });
  const snapshot = await buildSnapshot([{ dir: root, prefix: [] }]);
  expect(snapshot.ordered.map((skill) => skill.uri)).toEqual(['skill://s/SKILL.md']);
  const found = snapshot.diagnostics.map(({ severity, rule, file, line, column }) => ({
    severity,
    rule,
    file: path.relative(root, file),
    line,
    column,
  }));
  expect(found.sort((a, b) => (a.file < b.file ? -1 : 1))).toEqual([
    { severity: 'warning', rule: 'hidden-characters', file: 's/SKILL.md', line: 5, column: 13 },
    { severity: 'warning', rule: 'secret-file', file: 's/deploy.txt', line: 3, column: 1 },
    { severity: 'warning', rule: 'secret-file', file: 's/prod.env', line: undefined, column: undefined },
  ]);
});
