/**
 * The kept verdicts of `TokenVerifier` (docs/ARCHITECTURE.md, "Authorization"): keyed by the token itself, so they are
 * bounded by the characters of the tokens as well as by their number. Real JWTs signed with the key of the test
 * OpenID provider on 127.0.0.1, verified against its published key set.
 */
import { importJWK, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startOidcProvider, type TestProvider } from '../../scripts/test-oidc-provider.mjs';
import { CLOCK_SKEW_S, TokenVerifier, VERIFIED_CACHE_CHARS } from '../../src/transports/auth/verify.js';

const AUDIENCE = 'http://127.0.0.1:1/mcp';

describe('kept verdicts', () => {
  let provider: TestProvider;
  beforeAll(async () => {
    provider = await startOidcProvider({ resource: AUDIENCE });
  });
  afterAll(() => provider.close());

  /** `count` good tokens of exactly the same length (about 8,000 characters, near the longest a header may carry). */
  async function tokens(count: number, expiresIn = 300): Promise<string[]> {
    const key = provider.keys[0] as JWK;
    const signing = await importJWK(key, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    return Promise.all(
      Array.from({ length: count }, (_, index) =>
        new SignJWT({ scope: 'skills:read', pad: 'x'.repeat(5_600) })
          .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt' })
          .setIssuer(provider.issuer)
          .setAudience(AUDIENCE)
          .setSubject(`user-${String(index).padStart(5, '0')}`)
          .setIssuedAt(now)
          .setExpirationTime(now + expiresIn)
          .sign(signing),
      ),
    );
  }

  it('keeps the newest verdicts whose tokens fit in VERIFIED_CACHE_CHARS, and answers them without verifying', async () => {
    const verifier = new TokenVerifier({ issuers: [provider.issuer], audience: AUDIENCE, scopes: ['skills:read'] });
    const length = (await tokens(1))[0]?.length as number;
    const fit = Math.floor(VERIFIED_CACHE_CHARS / length);
    const all = await tokens(fit + 3);
    expect(new Set(all.map((token) => token.length))).toEqual(new Set([length]));
    for (const token of all) expect((await verifier.verify(token)).ok).toBe(true);
    // The 3 oldest went to make room; every other verdict is the one verification returned, kept.
    const kept = all.map((token) => verifier.kept(token)?.verdict);
    expect(kept.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(kept.slice(3).every((verdict) => verdict?.ok === true)).toBe(true);
    expect(kept.filter((verdict) => verdict !== undefined)).toHaveLength(fit);
    expect(kept.at(-1)).toMatchObject({ ok: true, subject: `user-${String(fit + 2).padStart(5, '0')}` });
  });

  it('a token expired within the skew is accepted, and holds (a listen stream too) until exp plus the skew', async () => {
    const verifier = new TokenVerifier({ issuers: [provider.issuer], audience: AUDIENCE, scopes: ['skills:read'] });
    const [token] = (await tokens(1, -2)) as [string];
    const exp = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { exp: number };
    const verdict = await verifier.verify(token);
    const end = (exp.exp + CLOCK_SKEW_S) * 1000;
    expect(verdict).toMatchObject({ ok: true, expiresAt: end });
    expect(verifier.kept(token, end - 1)).toEqual({ verdict, until: end });
    expect(verifier.kept(token, end)).toBeUndefined();
  });
});
