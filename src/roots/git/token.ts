/**
 * `SKILLS_SERVE_GIT_TOKEN` as HTTP authentication for one remote (docs/git-roots.md). The token becomes an
 * `Authorization: Basic` header scoped to the remote's origin (`http.<origin>/.extraHeader`), passed to git through
 * the environment (never the argument vector), and only over https or to a loopback host: a token is never sent in
 * clear text across a network. Redirects are not followed while a token is sent, so it cannot be carried to another
 * host. Pure.
 */
import { isLoopbackHost } from '../../loopback.js';
import type { GitRemote } from './url.js';

/** User name sent with the token: what GitHub expects for tokens; GitLab and Gitea accept any. */
const TOKEN_USERNAME = 'x-access-token';

/** What a token turns into for one remote. */
export interface TokenAuth {
  /** Configuration to pass through `GIT_CONFIG_COUNT` (empty when no token applies). */
  readonly secretConfig: readonly (readonly [string, string])[];
  /** Strings to redact from every message (the token, and `user:token` whose base64 is the header value). */
  readonly secrets: readonly string[];
  /** Why a given token is not used for this remote, if it is not. */
  readonly warning?: string;
}

/**
 * The git configuration that sends `token` to `remote`.
 *
 * @param remote the remote.
 * @param token the token, or `undefined`/`''` for none (the user's credential helpers still apply).
 * @returns the configuration, the secrets to redact, and a warning when the token is withheld (plain http to a
 *   host that is not loopback).
 */
export function tokenAuth(remote: GitRemote, token: string | undefined): TokenAuth {
  if (token === undefined || token === '') return { secretConfig: [], secrets: [] };
  const secrets = [token, `${TOKEN_USERNAME}:${token}`];
  if (remote.scheme !== 'https' && remote.scheme !== 'http') return { secretConfig: [], secrets };
  if (remote.scheme === 'http' && !isLoopbackHost(remote.hostname)) {
    return {
      secretConfig: [],
      secrets,
      warning: `SKILLS_SERVE_GIT_TOKEN is not sent to ${remote.display}: plain http would expose it (use https)`,
    };
  }
  const origin = `${remote.scheme}://${remote.hostname}${remote.port === '' ? '' : `:${remote.port}`}/`;
  const header = `Authorization: Basic ${Buffer.from(`${TOKEN_USERNAME}:${token}`).toString('base64')}`;
  // After a redirect git would send its extra headers to the new location too; no run follows one
  // (`http.followRedirects=false` is in every run's safety configuration, `exec.ts`).
  return { secretConfig: [[`http.${origin}.extraHeader`, header]], secrets };
}
