/**
 * The layer rules `npm run lint` enforces (`.dependency-cruiser.cjs`, docs/ARCHITECTURE.md "Layers"): run on a small
 * tree with a circle through type-only imports and a wrong-way import, they name exactly those; run on `src/`, none.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { REPO } from '../helpers/server.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
}

/** Runs depcruise with the project's rules on `dir`'s `src/`. */
function cruise(dir: string): Violation[] {
  let output: string;
  try {
    output = execFileSync(
      path.join(REPO, 'node_modules', '.bin', 'depcruise'),
      ['src', '--config', path.join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'json'],
      { cwd: dir, encoding: 'utf8' },
    );
  } catch (error) {
    // depcruise exits non-zero when it finds violations; the report is still on stdout.
    output = (error as { stdout: string }).stdout;
  }
  return (JSON.parse(output) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('layer rules', () => {
  it('report a circle through type-only imports and an import from index/ into server/', async () => {
    const dir = await makeTempDir();
    try {
      writeFileSync(path.join(dir, 'tsconfig.json'), '{"compilerOptions":{"module":"nodenext","strict":true}}\n');
      mkdirSync(path.join(dir, 'src', 'index'), { recursive: true });
      mkdirSync(path.join(dir, 'src', 'server'));
      writeFileSync(
        path.join(dir, 'src', 'index', 'a.ts'),
        "import type { B } from '../server/b.js';\nexport type A = { b?: B };\n",
      );
      writeFileSync(
        path.join(dir, 'src', 'server', 'b.ts'),
        "import type { A } from '../index/a.js';\nexport type B = { a?: A };\n",
      );
      const found = cruise(dir)
        .map((violation) => `${violation.rule.name}: ${violation.from} -> ${violation.to}`)
        .sort();
      expect(found).toEqual([
        'index-is-a-leaf: src/index/a.ts -> src/server/b.ts',
        'no-circular: src/index/a.ts -> src/server/b.ts',
      ]);
    } finally {
      await removeTree(dir);
    }
  });

  it('find nothing in src/', () => {
    expect(cruise(REPO)).toEqual([]);
  });
});
