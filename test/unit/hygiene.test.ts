/** Content-hygiene detectors: hidden characters in SKILL.md, secret-looking names and private key blocks. */
import { generateKeyPairSync } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { findHiddenCharacters, looksLikeSecretName, privateKeyLine } from '../../src/index/hygiene.js';

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
    [
      'emoji joined by ZWJ: 🧑‍💻, 👩🏽‍🚀, ❤️‍🔥',
      'Code \u{1F9D1}\u200D\u{1F4BB}, \u{1F469}\u{1F3FD}\u200D\u{1F680} \u2764\uFE0F\u200D\u{1F525}\n',
      undefined,
    ],
    [
      'a subdivision flag (Scotland)',
      'Flag: \u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}.\n',
      undefined,
    ],
    [
      'ZWJ and ZWNJ inside Devanagari and Persian words',
      '\u0915\u094D\u200D\u0937 \u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645\n',
      undefined,
    ],
    [
      'text spelled in tags after a black flag',
      '\u{1F3F4}' +
        [...'ignore all'].map((c) => String.fromCodePoint(0xe0000 + c.codePointAt(0)!)).join('') +
        '\u{E007F}',
      { count: 11, kinds: ['Unicode tag characters'], line: 1, column: 2 },
    ],
    [
      'joiners between Cyrillic letters',
      'игн\u200Dор\u200Cир',
      { count: 2, kinds: ['zero-width characters'], line: 1, column: 4 },
    ],
    ['a ZWJ between Latin letters', 'ign\u200Dore', { count: 1, kinds: ['zero-width characters'], line: 1, column: 4 }],
    [
      'a ZWJ after an emoji, before a letter',
      '\u{1F600}\u200Dx',
      { count: 1, kinds: ['zero-width characters'], line: 1, column: 2 },
    ],
    [
      'tag characters not after a black flag',
      'a\u{E0067}\u{E007F}',
      { count: 2, kinds: ['Unicode tag characters'], line: 1, column: 2 },
    ],
    [
      'a flag, then a hidden tag run on the next line',
      '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}\nok \u{E0049}',
      { count: 1, kinds: ['Unicode tag characters'], line: 2, column: 4 },
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

describe('privateKeyLine', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const body = pem.split('\n')[1] as string;
  it.each([
    ['a PKCS #8 key made here', pem, 1],
    ['after prose, in a code fence', `# Deploy\n\nThe key:\n\n\`\`\`\n${pem}\`\`\`\n`, 6],
    ['with CRLF line ends', pem.replaceAll('\n', '\r\n'), 1],
    [
      'quoted in Markdown',
      pem
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n')
        .slice(2),
      1,
    ],
    [
      'an encrypted key with headers',
      `x\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\n${body}\n-----END RSA PRIVATE KEY-----\n`,
      2,
    ],
    ['an OpenSSH key', `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n${body}\n-----END OPENSSH PRIVATE KEY-----\n`, 1],
    ['a lone marker line in prose', 'Never commit a `-----BEGIN RSA PRIVATE KEY-----` block.\n', undefined],
    [
      'a lone marker line in a code fence',
      '```\n-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----\n```\n',
      undefined,
    ],
    [
      'markers around a placeholder',
      '-----BEGIN PRIVATE KEY-----\n<your key here>\n-----END PRIVATE KEY-----\n',
      undefined,
    ],
    ['a body without its end line', `-----BEGIN PRIVATE KEY-----\n${body}\n`, undefined],
    ['mismatched labels', `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END EC PRIVATE KEY-----\n`, undefined],
    ['a public key', `-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----\n`, undefined],
    ['a certificate', `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`, undefined],
  ])('%s → line %s', (_label, text, expected) => {
    expect(privateKeyLine(new TextEncoder().encode(text))).toBe(expected);
  });
});
