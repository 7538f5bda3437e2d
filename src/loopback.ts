/**
 * The one loopback rule (docs/ARCHITECTURE.md, "Authorization"): which host names only reach this machine. `--http`
 * binds on such a host get DNS-rebinding protection and may go without a token; `--auth-issuer` and git remotes may use
 * plain `http://` only to such a host.
 */

/**
 * Whether a host only reaches this machine: `localhost`, `::1` (bare or in brackets, as in a URL) or `127.0.0.0/8`.
 *
 * @param host a bind address or a URL's `hostname`.
 */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/u.test(host);
}
