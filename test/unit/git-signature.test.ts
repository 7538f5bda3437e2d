/**
 * The pure parts of verified git sources: reading a raw commit's signature header (what decides, before any program
 * runs, that a commit is unsigned or not SSH-signed), and the check of an allowed signers file's text.
 */
import { describe, expect, it } from 'vitest';

import { checkAllowedSigners } from '../../src/cli/options.js';
import { commitSignature } from '../../src/roots/git/signature.js';

const TREE = 'tree aaff74984cccd156a469afa7d9ab10e4777beb24\n';
const PEOPLE = 'author T <t@x> 1 +0000\ncommitter T <t@x> 1 +0000\n';
const SSH = ' -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n \n -----END SSH SIGNATURE-----';

describe('commitSignature', () => {
  it.each([
    ['unsigned', `${TREE}${PEOPLE}\nmessage\n`, undefined],
    [
      'SSH-signed, continuation lines unfolded (an empty line inside is one space)',
      `${TREE}${PEOPLE}gpgsig${SSH}\n\nmessage\n`,
      '-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n\n-----END SSH SIGNATURE-----',
    ],
    [
      'SHA-256 repository header',
      `${TREE}${PEOPLE}gpgsig-sha256${SSH}\n\nmessage\n`,
      '-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n\n-----END SSH SIGNATURE-----',
    ],
    [
      'OpenPGP-signed',
      `${TREE}${PEOPLE}gpgsig -----BEGIN PGP SIGNATURE-----\n AAAA\n -----END PGP SIGNATURE-----\n\nm\n`,
      '-----BEGIN PGP SIGNATURE-----\nAAAA\n-----END PGP SIGNATURE-----',
    ],
    [
      'a signature inside a merged tag (mergetag continuation) is not the commit’s',
      `${TREE}${PEOPLE}mergetag object 1\n type commit\n gpgsig${SSH}\n\nmessage\n`,
      undefined,
    ],
    ['a "gpgsig" line in the message is not a header', `${TREE}${PEOPLE}\ngpgsig${SSH}\n`, undefined],
  ])('%s', (_name, commit, expected) => {
    expect(commitSignature(commit)).toBe(expected);
  });
});

describe('checkAllowedSigners', () => {
  it('counts signer lines, leaving out comments and blank lines', () => {
    expect(
      checkAllowedSigners('# team\n\nalice@example.com ssh-ed25519 AAAA\r\n  # old\nbob ssh-ed25519 BBBB\n', 'f'),
    ).toBe(2);
  });

  it.each(['', '\n\n', '# nobody\n   # yet\n'])('refuses a file without a signer (%j)', (text) => {
    expect(() => checkAllowedSigners(text, '/etc/signers')).toThrow(
      new RangeError('--git-allowed-signers /etc/signers lists no signer (one "principals keytype key" line each)'),
    );
  });
});
