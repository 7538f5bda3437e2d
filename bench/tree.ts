/**
 * Synthetic skill trees for the benchmarks, in one layout: skills in 50 group folders, each skill
 * a directory with `references/`, `scripts/` and `assets/` (4 directories per skill) holding 10 files: `SKILL.md`, 6
 * references, 2 scripts and one asset (a small template, or a large asset chosen by the caller). Deterministic content
 * (no randomness), so runs compare.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TreeShape {
  readonly skills: number;
  /** The large asset of skill `index` (written as `assets/asset.bin`), or `undefined` for the small template. */
  readonly largeAsset?: (index: number) => Buffer | undefined;
}

/** Files, bytes and directories written (the root not counted). */
export interface TreeStats {
  readonly files: number;
  readonly bytes: number;
  readonly dirs: number;
}

/** Root-relative directory of skill `index` (`/`-separated). */
export function skillRel(index: number): string {
  return `group-${String(index % 50).padStart(2, '0')}/skill-${String(index).padStart(5, '0')}`;
}

/**
 * Writes the tree under `root` (which must exist and be empty).
 *
 * @returns how many files, bytes and directories were written.
 */
export function writeSyntheticTree(root: string, shape: TreeShape): TreeStats {
  let files = 0;
  let bytes = 0;
  let dirs = 0;
  const groups = new Set<string>();
  const write = (file: string, content: string | Buffer): void => {
    writeFileSync(file, content);
    files++;
    bytes += typeof content === 'string' ? Buffer.byteLength(content) : content.length;
  };
  for (let index = 0; index < shape.skills; index++) {
    const name = `skill-${String(index).padStart(5, '0')}`;
    const rel = skillRel(index);
    const group = rel.split('/')[0] as string;
    if (!groups.has(group)) {
      groups.add(group);
      dirs++;
    }
    const dir = path.join(root, ...rel.split('/'));
    for (const sub of ['references', 'scripts', 'assets']) mkdirSync(path.join(dir, sub), { recursive: true });
    dirs += 4;
    write(
      path.join(dir, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Synthetic benchmark skill ${index}; use it when measuring.\nlicense: MIT\n---\n# ${name}\n\n${'Step by step instructions. '.repeat(40)}\n`,
    );
    for (let file = 0; file < 6; file++)
      write(
        path.join(dir, 'references', `topic-${file}.md`),
        `# Topic ${file} of ${name}\n${'Reference text line.\n'.repeat(60 + file * 20)}`,
      );
    write(path.join(dir, 'scripts', 'run.py'), `print("skill ${index}")\n`.repeat(30));
    write(path.join(dir, 'scripts', 'helper.sh'), `#!/bin/sh\necho ${index}\n`);
    const large = shape.largeAsset?.(index);
    if (large !== undefined) write(path.join(dir, 'assets', 'asset.bin'), large);
    else write(path.join(dir, 'assets', 'template.md'), `Template for ${name}\n`.repeat(20));
  }
  return { files, bytes, dirs };
}
