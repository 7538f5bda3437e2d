/**
 * Executable content in skills (pure; docs/security.md, "Executable content"): which files of a skill a model could
 * be told to run, each with why. A file is flagged for what it is, never for what it says: a `.md` that mentions a
 * script is not flagged.
 *
 * - `scripts`: it lies under a `scripts/` folder of the skill or of a skill nested in it (the Agent Skills format's
 *   folder of "executable code that agents can run"), Markdown files (`.md`) there excepted: they are documentation;
 * - `execute-bit`: its mode has an execute bit (user, group or other), unless the skill's own `SKILL.md` has one too
 *   (then the file system marks every file executable: FAT, NTFS or `/mnt/c` mounts, archives without modes);
 * - `shebang`: it starts with `#!`, optional blanks, then an absolute interpreter path (`#!/usr/bin/env python3`);
 * - `elf`, `mach-o`, `pe`: it starts with the magic number of a native executable or library (ELF; Mach-O thin or
 *   fat; PE: `MZ` with `PE\0\0` where the DOS header points).
 *
 * Bytes that merely contain NUL are not flagged: images, PDFs, fonts and archives all do. Neither are other bytecode
 * formats (WebAssembly, Java classes): they need a runtime the skill would have to name in a script.
 *
 * The content marks are found once, when a file is hashed (`digest.ts`), and kept in its record key (`record.ts`) and
 * the digest cache (`digest-cache.ts`), so a file trusted by identity is flagged without being read.
 */
import { DirNode, type ExecutableFile, type ExecutableReason, FileNode } from './types.js';

/** Mark: the file's mode has an execute bit. */
export const EXECUTE_BIT = 1;
/** Mark: the file starts with a shebang line. */
export const SHEBANG = 2;
/** Mark: ELF magic. */
export const ELF = 4;
/** Mark: Mach-O magic (thin, either byte order, or fat). */
export const MACH_O = 8;
/** Mark: a PE (Windows) executable. */
export const PE = 16;
/** The marks found in a file's bytes (the rest, {@link EXECUTE_BIT}, comes from its mode). */
export const CONTENT_MARKS = SHEBANG | ELF | MACH_O | PE;
/** Every mark. */
export const ALL_MARKS = EXECUTE_BIT | CONTENT_MARKS;

const MARK_REASONS: readonly (readonly [number, ExecutableReason])[] = [
  [EXECUTE_BIT, 'execute-bit'],
  [SHEBANG, 'shebang'],
  [ELF, 'elf'],
  [MACH_O, 'mach-o'],
  [PE, 'pe'],
];

/** The `_meta` key of an entry's executable files (this project's own prefix, like `dev.skills-serve/source`). */
export const EXECUTABLES_META_KEY = 'dev.skills-serve/executables';

/** Documentation under `scripts/`, not flagged for where it is: `.md` and `.markdown`, in any case. */
const MARKDOWN = /\.(?:md|markdown)$/iu;

/** How far into a file the PE header may start and still be found (bytes): the head every hash reads first. */
const MAX_PE_OFFSET = 64 * 1024;
const FAT_MAX_ARCHS = 20;

/**
 * The content marks of a file from its first bytes.
 *
 * @param head the file's first bytes (up to 64 KiB; fewer when the file is shorter).
 * @returns {@link SHEBANG}, {@link ELF}, {@link MACH_O}, {@link PE} or 0.
 */
export function contentMarks(head: Uint8Array): number {
  if (head.length >= 3 && head[0] === 0x23 && head[1] === 0x21) {
    let at = 2;
    while (head[at] === 0x20 || head[at] === 0x09) at++;
    return head[at] === 0x2f ? SHEBANG : 0;
  }
  if (head.length < 4) return 0;
  const view = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const magic = view.readUInt32BE(0);
  if (magic === 0x7f454c46) return ELF;
  if (magic === 0xfeedface || magic === 0xfeedfacf || magic === 0xcefaedfe || magic === 0xcffaedfe) return MACH_O;
  // Fat Mach-O; Java class files share 0xcafebabe, with a class-file version (45 or more) where the count would be.
  if ((magic === 0xcafebabe || magic === 0xcafebabf) && head.length >= 8) {
    const archs = view.readUInt32BE(4);
    return archs > 0 && archs < FAT_MAX_ARCHS ? MACH_O : 0;
  }
  if (head[0] === 0x4d && head[1] === 0x5a && head.length >= 0x40) {
    const at = view.readUInt32LE(0x3c);
    if (at < MAX_PE_OFFSET && at + 4 <= head.length && view.readUInt32BE(at) === 0x50450000) return PE;
  }
  return 0;
}

/** Whether a `stat` mode has an execute bit for anyone. */
export function hasExecuteBit(mode: number): boolean {
  return (mode & 0o111) !== 0;
}

/**
 * The flagged files of a skill, sorted by path (code-unit order).
 *
 * @param node the skill's directory, complete.
 * @param marksOf a file's marks (`record.ts` `executableMarks`).
 * @returns one item per flagged file; empty when the skill bundles nothing executable.
 */
export function executableFiles(node: DirNode, marksOf: (file: FileNode) => number): ExecutableFile[] {
  const manifest = node.children.find((child) => child.name === 'SKILL.md');
  const ignoreExecuteBit = manifest instanceof FileNode && (marksOf(manifest) & EXECUTE_BIT) !== 0;
  const found: ExecutableFile[] = [];
  const visit = (dir: DirNode, prefix: string, inScripts: boolean): void => {
    const isSkillDir = dir.children.some((child) => child instanceof FileNode && child.name === 'SKILL.md');
    for (const child of dir.children) {
      const path = prefix + child.name;
      if (child instanceof DirNode) {
        visit(child, `${path}/`, inScripts || (isSkillDir && child.name === 'scripts'));
        continue;
      }
      const reasons: ExecutableReason[] = inScripts && !MARKDOWN.test(child.name) ? ['scripts'] : [];
      const marks = marksOf(child) & (ignoreExecuteBit ? CONTENT_MARKS : ALL_MARKS);
      for (const [mark, reason] of MARK_REASONS) if ((marks & mark) !== 0) reasons.push(reason);
      if (reasons.length > 0) found.push({ path, reasons });
    }
  };
  visit(node, '', false);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The `_meta` value of a skill's flagged files: each path with its reasons (`{ "scripts/run.py": ["scripts",
 * "shebang"] }`).
 */
export function executablesMeta(files: readonly ExecutableFile[]): Record<string, readonly ExecutableReason[]> {
  return Object.fromEntries(files.map((file) => [file.path, file.reasons]));
}
