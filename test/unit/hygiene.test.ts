/** Content-hygiene detectors: hidden characters in SKILL.md, secret-looking names and private key blocks. */
import { describe, expect, it } from 'vitest';

import { containsPrivateKey, findHiddenCharacters, looksLikeSecretName } from '../../src/index/hygiene.js';

describe('findHiddenCharacters', () => {
  it.each([
    ['plain text', 'Just text.\nMore.\n', undefined],
    ['a leading BOM only', '\uFEFFname: x\n', undefined],
    ['a zero-width space', 'ab\u200Bc', { count: 1, kinds: ['zero-width characters'], line: 1, column: 3 }],
    ['a BOM later in the text', 'a\n\uFEFFb', { count: 1, kinds: ['zero-width characters'], line: 2, column: 1 }],
    [
      'tag characters on line 3',
      'x\ny\nok \u{E0049}\u{E0047}',
      { count: 2, kinds: ['Unicode tag characters'], line: 3, column: 4 },
    ],
    ['a right-to-left override', 'safe\u202Eevil', { count: 1, kinds: ['bidirectional controls'], line: 1, column: 5 }],
    [
      'every kind, columns in code points',
      '😀\u2066\u200D\u{E0020}',
      {
        count: 3,
        kinds: ['Unicode tag characters', 'bidirectional controls', 'zero-width characters'],
        line: 1,
        column: 2,
      },
    ],
  ])('%s', (_label, text, expected) => {
    expect(findHiddenCharacters(text)).toEqual(expected);
  });
});

describe('looksLikeSecretName', () => {
  it.each([
    ['id_rsa', true],
    ['id_ed25519', true],
    ['id_rsa.pub', false],
    ['server.pem', true],
    ['cert.PEM', true],
    ['bundle.p12', true],
    ['tls.key', true],
    ['credentials', true],
    ['credentials.json', true],
    ['prod.env', true],
    ['README.md', false],
    ['keys.md', false],
    ['environment.md', false],
    ['monkey', false],
  ])('%s → %s', (name, expected) => {
    expect(looksLikeSecretName(name)).toBe(expected);
  });
});

describe('containsPrivateKey', () => {
  it.each([
    ['-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n', true],
    ['-----BEGIN RSA PRIVATE KEY-----\n', true],
    ['-----BEGIN ENCRYPTED PRIVATE KEY-----\n', true],
    ['-----BEGIN PRIVATE KEY-----\n', true],
    ['-----BEGIN PUBLIC KEY-----\n', false],
    ['-----BEGIN CERTIFICATE-----\n', false],
    ['talks about a PRIVATE KEY in prose', false],
  ])('%j → %s', (text, expected) => {
    expect(containsPrivateKey(new TextEncoder().encode(text))).toBe(expected);
  });
});
