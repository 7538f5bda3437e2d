/** The default log level: quiet when a host runs the server over stdio, informative in a terminal or over HTTP. */
import { describe, expect, it } from 'vitest';

import { defaultLogLevel } from '../../src/log.js';

describe('defaultLogLevel', () => {
  it.each([
    [true, false, 'warn'],
    [true, true, 'info'],
    [false, false, 'info'],
    [false, true, 'info'],
  ] as const)('stdio %s, stderr a terminal %s → %s', (stdio, terminal, expected) => {
    expect(defaultLogLevel(stdio, terminal)).toBe(expected);
  });
});
