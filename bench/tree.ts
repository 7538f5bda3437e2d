/**
 * Synthetic skill trees for the benchmarks: `skills` skill directories of ~10 files each, mostly small text files,
 * with a multi-MB asset in one skill out of `largeEvery`. Deterministic content (no randomness), so runs compare.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TreeShape {
  readonly skills: number;
  /** Every n-th skill gets one large asset (bytes below). */
  readonly largeEvery: number;
  readonly largeBytes: number;
}

/** Files and bytes written. */
export interface TreeStats {
  readonly files: number;
  readonly bytes: number;
}

/**
 * Writes the tree under `root` (which must exist and be empty).
 *
 * @returns how many files and bytes were written.
 */
export function writeSyntheticTree(root: string, shape: TreeShape): TreeStats {
  let files = 0;
  let bytes = 0;
  const write = (file: string, content: string | Buffer): void => {
    writeFileSync(file, content);
    files++;
    bytes += typeof content === 'string' ? Buffer.byteLength(content) : content.length;
  };
  const large = Buffer.alloc(shape.largeBytes, 0x5a);
  for (let index = 0; index < shape.skills; index++) {
    const name = `skill-${String(index).padStart(5, '0')}`;
    const dir = path.join(root, `group-${String(index % 50).padStart(2, '0')}`, name);
    mkdirSync(path.join(dir, 'references'), { recursive: true });
    mkdirSync(path.join(dir, 'scripts'), { recursive: true });
    write(path.join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: Synthetic benchmark skill ${index}; use it when measuring.\nlicense: MIT\n---\n# ${name}\n\n${'Step by step instructions. '.repeat(40)}\n`);
    for (let file = 0; file < 6; file++) write(path.join(dir, 'references', `topic-${file}.md`), `# Topic ${file} of ${name}\n${'Reference text line.\n'.repeat(60 + file * 20)}`);
    write(path.join(dir, 'scripts', 'run.py'), `print("skill ${index}")\n`.repeat(30));
    write(path.join(dir, 'scripts', 'helper.sh'), `#!/bin/sh\necho ${index}\n`);
    if (index % shape.largeEvery === 0) write(path.join(dir, 'asset.bin'), large);
    else write(path.join(dir, 'template.md'), `Template for ${name}\n`.repeat(20));
  }
  return { files, bytes };
}
