/**
 * Which skills that skills-serve leaves out (an error rule: `ERROR_RULES` in src/index/diagnostics.ts) stock Claude
 * Code 2.1.332 loads natively: one skill per rule case, plus a valid control, in a throwaway `~/.claude/skills`, no
 * MCP server, Claude Code run once offline (its own network namespace, loopback only, the stand-in model: see
 * harness.ts). For each case, the lines of the first model request that name the skill's folder, its frontmatter name
 * or the marker its description starts with: what the model is told about it (its native skill listing), or nothing.
 * docs/rules.md quotes the outcome ("Stricter or looser than skills-ref, Claude Code and the installer").
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { firstModelRequest, jsonStrings } from './discoverability.js';
import { HostUser } from './harness.js';

/** One skill folder under ~/.claude/skills: its SKILL.md (bytes, so invalid UTF-8 can be written) and extra files. */
interface NativeCase {
  /** The rule skills-serve leaves it out under, and which variant. */
  readonly id: string;
  readonly dir: string;
  readonly skillMd: string | Buffer;
  /** Words of its frontmatter (name, description marker) to find in the request besides the folder name. */
  readonly words: readonly string[];
  readonly extraFiles?: (dir: string) => void;
}

/** A description that starts with `marker`, padded with numbered words to exactly `length` characters. */
function longDescription(marker: string, length: number): string {
  let text = `${marker} Use when testing how long descriptions load.`;
  for (let i = 0; text.length < length; i++) text += ` w${i}`;
  return text.slice(0, length);
}

const frontmatter = (lines: readonly string[], body = '# Body\n'): string => `---\n${lines.join('\n')}\n---\n${body}`;

const CASES: readonly NativeCase[] = [
  {
    id: 'control (valid)',
    dir: 'nat-control',
    skillMd: frontmatter(['name: nat-control', 'description: NATMARK-CONTROL A valid skill. Use when testing.']),
    words: ['NATMARK-CONTROL'],
  },
  {
    id: 'name-format: upper case and underscore',
    dir: 'Nat_Upper',
    skillMd: frontmatter(['name: Nat_Upper', 'description: NATMARK-UPPER Name with capitals. Use when testing.']),
    words: ['NATMARK-UPPER'],
  },
  {
    id: 'name-format: non-ASCII lowercase',
    dir: 'nat-unicodé',
    skillMd: frontmatter(['name: nat-unicodé', 'description: NATMARK-UNICODE Accented name. Use when testing.']),
    words: ['NATMARK-UNICODE'],
  },
  {
    id: 'name-format: consecutive hyphens',
    dir: 'nat--double',
    skillMd: frontmatter(['name: nat--double', 'description: NATMARK-DOUBLE Two hyphens. Use when testing.']),
    words: ['NATMARK-DOUBLE'],
  },
  {
    id: 'name-format: 70 characters',
    dir: `nat-long-${'x'.repeat(61)}`,
    skillMd: frontmatter([
      `name: nat-long-${'x'.repeat(61)}`,
      'description: NATMARK-LONGNAME Long name. Use when testing.',
    ]),
    words: ['NATMARK-LONGNAME'],
  },
  {
    id: 'name-mismatch',
    dir: 'nat-folder',
    skillMd: frontmatter([
      'name: nat-other',
      'description: NATMARK-MISMATCH Name is not the folder. Use when testing.',
    ]),
    words: ['nat-other', 'NATMARK-MISMATCH'],
  },
  {
    id: 'description-length: 1100 characters',
    dir: 'nat-desc-long',
    skillMd: frontmatter(['name: nat-desc-long', `description: ${longDescription('NATMARK-DESCLONG', 1100)}`]),
    words: ['NATMARK-DESCLONG'],
  },
  {
    id: 'description-length: empty',
    dir: 'nat-desc-empty',
    skillMd: frontmatter(['name: nat-desc-empty', 'description: ""']),
    words: [],
  },
  {
    id: 'description-blank',
    dir: 'nat-desc-blank',
    skillMd: frontmatter(['name: nat-desc-blank', 'description: "   "']),
    words: [],
  },
  {
    id: 'compatibility-length: 520 characters',
    dir: 'nat-compat',
    skillMd: frontmatter([
      'name: nat-compat',
      'description: NATMARK-COMPAT Long compatibility. Use when testing.',
      `compatibility: ${'c'.repeat(520)}`,
    ]),
    words: ['NATMARK-COMPAT'],
  },
  {
    id: 'metadata-values: a number',
    dir: 'nat-meta',
    skillMd: frontmatter([
      'name: nat-meta',
      'description: NATMARK-META Metadata with a number. Use when testing.',
      'metadata:',
      '  version: 1.0',
    ]),
    words: ['NATMARK-META'],
  },
  {
    id: 'required-fields: no description',
    dir: 'nat-no-desc',
    skillMd: frontmatter(['name: nat-no-desc'], '# Body\n\nNATMARK-NODESC-BODY the body says what it does.\n'),
    words: ['NATMARK-NODESC-BODY'],
  },
  {
    id: 'required-fields: no name',
    dir: 'nat-no-name',
    skillMd: frontmatter(['description: NATMARK-NONAME No name field. Use when testing.']),
    words: ['NATMARK-NONAME'],
  },
  {
    id: 'required-fields: description a list',
    dir: 'nat-desc-list',
    skillMd: frontmatter(['name: nat-desc-list', 'description:', '  - NATMARK-DESCLIST one', '  - two']),
    words: ['NATMARK-DESCLIST'],
  },
  {
    id: 'frontmatter-syntax: plain value holding ": "',
    dir: 'nat-colon',
    skillMd: frontmatter(['name: nat-colon', 'description: NATMARK-COLON Use when: the value holds a colon.']),
    words: ['NATMARK-COLON'],
  },
  {
    id: 'frontmatter-syntax: duplicate key',
    dir: 'nat-dupkey',
    skillMd: frontmatter([
      'name: nat-dupkey',
      'description: NATMARK-DUPKEY-FIRST First. Use when testing.',
      'description: NATMARK-DUPKEY-SECOND Second. Use when testing.',
    ]),
    words: ['NATMARK-DUPKEY-FIRST', 'NATMARK-DUPKEY-SECOND'],
  },
  {
    id: 'frontmatter-missing',
    dir: 'nat-no-fm',
    skillMd: '# nat-no-fm\n\nNATMARK-NOFM-BODY A skill with no frontmatter. Use when testing.\n',
    words: ['NATMARK-NOFM-BODY'],
  },
  {
    id: 'frontmatter-unclosed',
    dir: 'nat-unclosed',
    skillMd: '---\nname: nat-unclosed\ndescription: NATMARK-UNCLOSED No closing line. Use when testing.\n# Body\n',
    words: ['NATMARK-UNCLOSED'],
  },
  {
    id: 'encoding: invalid UTF-8 byte',
    dir: 'nat-encoding',
    skillMd: Buffer.concat([
      Buffer.from('---\nname: nat-encoding\ndescription: NATMARK-ENCODING Bad byte '),
      Buffer.from([0xff]),
      Buffer.from(' here. Use when testing.\n---\n# Body\n'),
    ]),
    words: ['NATMARK-ENCODING'],
  },
  {
    id: 'skill-too-many-files: 513 files',
    dir: 'nat-many-files',
    skillMd: frontmatter(['name: nat-many-files', 'description: NATMARK-MANYFILES 513 files. Use when testing.']),
    words: ['NATMARK-MANYFILES'],
    extraFiles: (dir) => {
      mkdirSync(path.join(dir, 'references'));
      for (let i = 0; i < 512; i++) writeFileSync(path.join(dir, 'references', `f${i}.md`), `file ${i}\n`);
    },
  },
  {
    id: 'skill-too-large: 17 MiB',
    dir: 'nat-too-large',
    skillMd: frontmatter(['name: nat-too-large', 'description: NATMARK-TOOLARGE 17 MiB. Use when testing.']),
    words: ['NATMARK-TOOLARGE'],
    extraFiles: (dir) => writeFileSync(path.join(dir, 'data.bin'), Buffer.alloc(17 * 1024 * 1024, 0x61)),
  },
];

/**
 * The lines of `texts` (each split at newlines), in order and repeats kept, that hold one of `words` as a whole word
 * (no letter, digit, `_` or `-` either side).
 */
function linesNaming(texts: readonly string[], words: readonly string[]): string[] {
  const patterns = words.map(
    (word) =>
      new RegExp(`(?<![\\p{L}\\p{N}_-])${word.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}(?![\\p{L}\\p{N}_-])`, 'u'),
  );
  return texts.flatMap((text) => text.split('\n')).filter((line) => patterns.some((p) => p.test(line)));
}

describe('stock Claude Code 2.1.332 and skills skills-serve leaves out, in ~/.claude/skills', () => {
  let user: HostUser;
  let texts: string[];

  beforeAll(() => {
    user = new HostUser('claude', undefined);
    const skills = path.join(user.home, '.claude', 'skills');
    for (const c of CASES) {
      const dir = path.join(skills, c.dir);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'SKILL.md'), c.skillMd);
      c.extraFiles?.(dir);
    }
    const prompt = 'Which skills can you use here? (NATIVE-INVALID-PROBE)';
    const run = user.offline(['-p', prompt]);
    expect(run.stdout).toBe('FAKE-MODEL-REPLY\n');
    expect(user.serverStarts()).toBe(0);
    const request = firstModelRequest(user, prompt);
    if (request === undefined) throw new Error(`Claude Code sent the model no request offering tools for "${prompt}"`);
    texts = jsonStrings(request.conversation.body);
  });

  afterAll(async () => {
    await user?.close();
  });

  it('lists, per case, what its first model request says about the skill', () => {
    const measured = Object.fromEntries(CASES.map((c) => [c.id, linesNaming(texts, [c.dir, ...c.words])]));
    process.stdout.write(`${JSON.stringify(measured, null, 2)}\n`);
    // Every case is listed once, under its folder's name (the frontmatter name after it in parentheses when it
    // differs); a description that is missing, empty, blank or not a string gives way to the body's first line, and
    // with no frontmatter (or an unclosed one) the file's first line stands in for it. Nothing is cut or refused.
    expect(measured).toEqual({
      'control (valid)': ['- nat-control: NATMARK-CONTROL A valid skill. Use when testing.'],
      'name-format: upper case and underscore': ['- Nat_Upper: NATMARK-UPPER Name with capitals. Use when testing.'],
      'name-format: non-ASCII lowercase': ['- nat-unicodé: NATMARK-UNICODE Accented name. Use when testing.'],
      'name-format: consecutive hyphens': ['- nat--double: NATMARK-DOUBLE Two hyphens. Use when testing.'],
      'name-format: 70 characters': [`- nat-long-${'x'.repeat(61)}: NATMARK-LONGNAME Long name. Use when testing.`],
      'name-mismatch': ['- nat-folder (nat-other): NATMARK-MISMATCH Name is not the folder. Use when testing.'],
      // All 1100 characters.
      'description-length: 1100 characters': [`- nat-desc-long: ${longDescription('NATMARK-DESCLONG', 1100)}`],
      'description-length: empty': ['- nat-desc-empty: Body'],
      'description-blank': ['- nat-desc-blank: Body'],
      'compatibility-length: 520 characters': ['- nat-compat: NATMARK-COMPAT Long compatibility. Use when testing.'],
      'metadata-values: a number': ['- nat-meta: NATMARK-META Metadata with a number. Use when testing.'],
      'required-fields: no description': ['- nat-no-desc: Body'],
      'required-fields: no name': ['- nat-no-name: NATMARK-NONAME No name field. Use when testing.'],
      'required-fields: description a list': ['- nat-desc-list: Body'],
      'frontmatter-syntax: plain value holding ": "': ['- nat-colon: NATMARK-COLON Use when: the value holds a colon.'],
      // The last of the two keys wins.
      'frontmatter-syntax: duplicate key': ['- nat-dupkey: NATMARK-DUPKEY-SECOND Second. Use when testing.'],
      'frontmatter-missing': ['- nat-no-fm: nat-no-fm'],
      'frontmatter-unclosed': ['- nat-unclosed: ---'],
      'encoding: invalid UTF-8 byte': ['- nat-encoding: NATMARK-ENCODING Bad byte \uFFFD here. Use when testing.'],
      'skill-too-many-files: 513 files': ['- nat-many-files: NATMARK-MANYFILES 513 files. Use when testing.'],
      'skill-too-large: 17 MiB': ['- nat-too-large: NATMARK-TOOLARGE 17 MiB. Use when testing.'],
    });
  });
});
