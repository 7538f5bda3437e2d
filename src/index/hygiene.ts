/**
 * Content-hygiene checks (pure): characters a reader cannot see in `SKILL.md` (instructions hidden from the person
 * approving a skill), and files that look like secrets. Findings are warnings: the skill is still served, since
 * only its author can say whether they are intended.
 */

/** Invisible or direction-changing characters, by kind. */
const HIDDEN: readonly { kind: string; pattern: RegExp }[] = [
  { kind: 'Unicode tag characters', pattern: /[\u{E0000}-\u{E007F}]/u },
  { kind: 'bidirectional controls', pattern: /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u },
  { kind: 'zero-width characters', pattern: /[\u200B-\u200D\u2060\uFEFF]/u },
];
const ANY_HIDDEN = /[\u{E0000}-\u{E007F}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u200B-\u200D\u2060\uFEFF]/gu;
const HAS_HIDDEN = new RegExp(ANY_HIDDEN.source, 'u');

/** Where hidden characters were found. */
export interface HiddenCharacters {
  /** How many there are (a BOM at the very start is not counted). */
  readonly count: number;
  /** Kinds present, in the order of {@link HIDDEN}. */
  readonly kinds: readonly string[];
  /** 1-based line and column (in code points) of the first one. */
  readonly line: number;
  readonly column: number;
}

/**
 * Finds invisible Unicode tag characters, bidi controls and zero-width characters in a text.
 *
 * @param text decoded `SKILL.md`.
 * @returns the findings, or `undefined` when there are none.
 */
export function findHiddenCharacters(text: string): HiddenCharacters | undefined {
  const unmasked = text.startsWith('\uFEFF') ? text.slice(1) : text;
  // Most texts hold no such character: they are scanned once, never masked.
  if (!HAS_HIDDEN.test(unmasked)) return undefined;
  const body = withoutVisibleSequences(unmasked);
  const offset = text.length - body.length;
  const matches = [...body.matchAll(ANY_HIDDEN)];
  const first = matches[0];
  if (first === undefined) return undefined;
  const before = text.slice(0, (first.index ?? 0) + offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return {
    count: matches.length,
    kinds: HIDDEN.filter(({ pattern }) => pattern.test(body)).map(({ kind }) => kind),
    line: before.split('\n').length,
    column: [...before.slice(lineStart)].length + 1,
  };
}

/** A letter or mark of a script whose letters join, or not, by zero-width (non-)joiners. */
const SHAPING = `[${['Arabic', 'Syriac', 'Nko', 'Devanagari', 'Bengali', 'Gurmukhi', 'Gujarati', 'Oriya', 'Tamil', 'Telugu', 'Kannada', 'Malayalam', 'Sinhala', 'Khmer', 'Myanmar', 'Tibetan', 'Mongolian'].map((script) => `\\p{Script=${script}}`).join('')}]`;

/**
 * Sequences whose invisible characters draw what a reader sees, so they hide nothing: a zero-width joiner between two
 * emoji (🧑‍💻, 👩🏽‍🚀, ❤️‍🔥: the first may carry a variation selector or skin tone), the tag characters of a
 * subdivision flag (🏴 + 2 to 6 tag letters or digits + cancel tag: 🏴󠁧󠁢󠁳󠁣󠁴󠁿; any other tag run can spell hidden
 * text), and a zero-width joiner or non-joiner between two letters of a script that shapes with them (Devanagari,
 * Arabic, Malayalam, …; never Latin, Cyrillic or Greek, where they only hide text).
 */
const VISIBLE_SEQUENCES: readonly RegExp[] = [
  /(?<=\p{Extended_Pictographic}(?:\u{FE0F}|\p{Emoji_Modifier})?)\u200D(?=\p{Extended_Pictographic})/gu,
  /(?<=\u{1F3F4})[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{2,6}\u{E007F}/gu,
  new RegExp(`(?<=${SHAPING})[\\u200C\\u200D](?=${SHAPING})`, 'gu'),
];

/** `text` with the characters of {@link VISIBLE_SEQUENCES} replaced one for one by visible ones (columns kept). */
function withoutVisibleSequences(text: string): string {
  let masked = text;
  for (const pattern of VISIBLE_SEQUENCES)
    masked = masked.replace(pattern, (sequence) =>
      [...sequence].map((char) => (char.length === 2 ? '\u{1F3F4}' : '_')).join(''),
    );
  return masked;
}

const SECRET_NAMES: readonly RegExp[] = [
  /^id_(?:rsa|dsa|ecdsa|ed25519)$/u,
  /\.(?:pem|p12|pfx|key)$/iu,
  /^credentials(?:\.[\w-]+)?$/iu,
  /\.env$/u,
];

/**
 * Whether a file name is typical of secrets: SSH private keys (`id_rsa`), PEM/PKCS#12 bundles and keys, `credentials`
 * files, and `*.env` files (dotfiles such as `.env` are never served at all).
 */
export function looksLikeSecretName(name: string): boolean {
  return SECRET_NAMES.some((pattern) => pattern.test(name));
}

/** How much of each file's start is scanned for private key blocks (bytes). */
export const SECRET_SCAN_BYTES = 64 * 1024;

const BEGIN_MARKER = Buffer.from('-----BEGIN ', 'latin1');
/** A PEM block's opening line: its label, and what follows it up to the end of the block or the window. */
const PRIVATE_KEY_BLOCK =
  /^-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----[ \t]*\r?\n((?:[ \t>]*[A-Za-z-]+: [^\n]*\r?\n)*(?:[ \t>]*\r?\n)?)((?:[ \t>]*[A-Za-z0-9+/=]{16,}[ \t]*\r?\n)+)[ \t>]*-----END \1-----/u;
/** Longest block looked at from its opening line (characters): a 16384-bit RSA key in PEM is about 12,700. */
const BLOCK_WINDOW = 16 * 1024;

/**
 * Where bytes hold a PEM private key block (RFC 7468 §2): a `-----BEGIN … PRIVATE KEY-----` line, optional headers
 * (`Proc-Type: …` of an encrypted key), at least one line of base64 body (16 characters or more) and the matching
 * `-----END … PRIVATE KEY-----` line. A marker line alone (prose, a code fence without a key body) is not a block.
 * Lines may be indented or quoted (`>`), as in Markdown. Searches for `-----BEGIN ` with `Buffer#indexOf` (no string
 * is made of files without one).
 *
 * @param bytes file content (only the first {@link SECRET_SCAN_BYTES} need to be passed).
 * @returns the 1-based line of the first block's opening line, or `undefined` when there is none.
 */
export function privateKeyLine(bytes: Uint8Array): number | undefined {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = buffer.indexOf(BEGIN_MARKER); at !== -1; at = buffer.indexOf(BEGIN_MARKER, at + 1)) {
    if (!PRIVATE_KEY_BLOCK.test(buffer.toString('latin1', at, Math.min(buffer.length, at + BLOCK_WINDOW)))) continue;
    let line = 1;
    for (let newline = buffer.indexOf(10); newline !== -1 && newline < at; newline = buffer.indexOf(10, newline + 1))
      line++;
    return line;
  }
  return undefined;
}

/**
 * Whether bytes hold a PEM private key block ({@link privateKeyLine}).
 *
 * @param bytes file content (only the first {@link SECRET_SCAN_BYTES} need to be passed).
 */
export function containsPrivateKey(bytes: Uint8Array): boolean {
  return privateKeyLine(bytes) !== undefined;
}
