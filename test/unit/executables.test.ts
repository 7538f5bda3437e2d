/**
 * What a file's first bytes say about it (`src/index/executables.ts` `contentMarks`): shebangs with an absolute
 * interpreter path and native magic numbers are flagged; look-alikes (a Markdown heading, `#!` without a path, a
 * Java class file, `MZ` text, bytes full of NUL) never are.
 */
import { describe, expect, it } from 'vitest';

import { contentMarks, ELF, MACH_O, PE, SHEBANG } from '../../src/index/executables.js';

function pe(offset: number, length = 0x200): Buffer {
  const bytes = Buffer.alloc(length);
  bytes.write('MZ', 0, 'latin1');
  bytes.writeUInt32LE(offset, 0x3c);
  if (offset + 4 <= length) bytes.write('PE\0\0', offset, 'latin1');
  return bytes;
}

describe('contentMarks', () => {
  it.each([
    ['#!/bin/sh', Buffer.from('#!/bin/sh\necho\n'), SHEBANG],
    ['#! /usr/bin/env python3', Buffer.from('#! /usr/bin/env python3\n'), SHEBANG],
    ['#!\t/bin/bash', Buffer.from('#!\t/bin/bash\n'), SHEBANG],
    ['#!python (no path)', Buffer.from('#!python\n'), 0],
    ['#!important', Buffer.from('#!important note\n'), 0],
    ['# heading', Buffer.from('# Run #!/bin/sh\n'), 0],
    ['BOM then #!', Buffer.from('\uFEFF#!/bin/sh\n'), 0],
    ['#! alone', Buffer.from('#!'), 0],
    ['ELF', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1]), ELF],
    ['Mach-O 64 LE', Buffer.from([0xcf, 0xfa, 0xed, 0xfe, 7, 0]), MACH_O],
    ['Mach-O 32 BE', Buffer.from([0xfe, 0xed, 0xfa, 0xce, 0, 0]), MACH_O],
    ['fat Mach-O, 2 archs', Buffer.from([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2]), MACH_O],
    ['Java class, major 52', Buffer.from([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52]), 0],
    ['PE', pe(0x80), PE],
    ['MZ text', Buffer.from('MZ is a file format, as this sentence about it is long enough to have a header.'), 0],
    ['MZ pointing past the head', pe(0x400), 0],
    ['PNG', Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(32)]), 0],
    ['NUL bytes', Buffer.alloc(64), 0],
    ['empty', Buffer.alloc(0), 0],
  ])('%s', (_name, head, marks) => {
    expect(contentMarks(head)).toBe(marks);
  });
});
