import { SKILL_LIMITS } from '@modelcontextprotocol/server/ext/skills';
import { describe, expect, it } from 'vitest';

import { isIgnoredName, isRepresentableName, MANIFEST_NAME } from '../../src/index/policy.js';
import { isPathWithin } from '../../src/paths.js';

describe('constants', () => {
  it('match SEP-2640 limits and the Agent Skills manifest name', () => {
    expect(MANIFEST_NAME).toBe('SKILL.md');
    // The limits are the SDK's (the index checks SKILL_LIMITS); SEP-2640 sets them at 512 files and 16 MiB.
    expect(SKILL_LIMITS).toEqual({ files: 512, bytes: 16_777_216 });
  });
});

describe('isIgnoredName', () => {
  it.each([
    ['.git', true],
    ['.gitignore', true],
    ['.skillsignore', true],
    ['.DS_Store', true],
    ['.', true],
    ['..', true],
    ['.SKILL.md', true],
    ['.swp', true],
    ['node_modules', true],
    ['Node_Modules', false],
    ['NODE_MODULES', false],
    ['node_modules2', false],
    ['node_modules ', false],
    ['_node_modules', false],
    ['node-modules', false],
    ['SKILL.md', false],
    ['a.md', false],
    ['file.', false],
    ['x', false],
    [' .git', false],
    ['\uFF0Egit', false],
    ['', false],
    ['~backup', false],
    ['_private', false],
  ])('isIgnoredName(%j) === %s', (name, expected) => {
    expect(isIgnoredName(name)).toBe(expected);
  });
});

describe('isPathWithin', () => {
  it.each([
    ['identical path', '/skills', '/skills', true],
    ['direct child', '/skills/a', '/skills', true],
    ['deep child', '/skills/a/b/SKILL.md', '/skills', true],
    ['sibling sharing a prefix', '/skills-old', '/skills', false],
    ['file in a sibling sharing a prefix', '/skills-old/a/SKILL.md', '/skills', false],
    ['sibling with a longer name', '/skillsx/a', '/skills', false],
    ['parent of the root', '/', '/skills', false],
    ['unrelated path', '/etc/passwd', '/skills', false],
    ['case differs', '/Skills/a', '/skills', false],
    ['root with trailing slash, child', '/skills/a', '/skills/', true],
    ['root with trailing slash, sibling', '/skills-old/a', '/skills/', false],
    ['identical path with trailing slash', '/skills/', '/skills/', true],
    ['path with trailing slash under plain root', '/skills/', '/skills', true],
    ['filesystem root contains everything', '/etc/passwd', '/', true],
    ['filesystem root is itself', '/', '/', true],
    ['nested root: inside', '/srv/skills/team/a', '/srv/skills/team', true],
    ['nested root: outer sibling', '/srv/skills/teams/a', '/srv/skills/team', false],
    ['empty path', '', '/skills', false],
  ])('%s: isPathWithin(%j, %j) === %s', (_label, realPath, root, expected) => {
    expect(isPathWithin(realPath, root)).toBe(expected);
  });
});

describe('isRepresentableName', () => {
  it.each([
    ['SKILL.md', true],
    ['café', true],
    ['日本語.md', true],
    ['😀', true],
    ['', true],
    ['a b#c?', true],
    ['\uFFFD', false],
    ['caf\uFFFD.md', false],
    ['\uFFFD\uFFFD', false],
    ['name\uFFFD', false],
    ['\uFFFE', true],
    ['\uFFFC', true],
  ])('isRepresentableName(%j) === %s', (name, expected) => {
    expect(isRepresentableName(name)).toBe(expected);
  });

  it('names decoded lossily from invalid UTF-8 bytes are not representable', () => {
    const lossy = Buffer.from([0x63, 0x61, 0x66, 0xe9]).toString('utf8');
    expect(lossy).toBe('caf\uFFFD');
    expect(isRepresentableName(lossy)).toBe(false);
  });
});
