/**
 * Where a served tree came from (docs/git-roots.md, "Provenance", "Wiring"): the remote without credentials,
 * the ref as configured and the commit. The runtime puts it in each entry's `_meta` under {@link PROVENANCE_META_KEY},
 * a reverse-domain key of this project's own (MCP reserves `_meta` prefixes whose second label is
 * `modelcontextprotocol` or `mcp`, such as `io.modelcontextprotocol.skills/`, for the protocol and its extensions).
 * Pure.
 */

/** The `_meta` key of an entry's provenance (MCP `_meta` key syntax: a reverse-DNS prefix, `/`, a name). */
export const PROVENANCE_META_KEY = 'dev.skills-serve/source';

/** Provenance of one git root's tree. Holds no credentials (the URL is the remote's display form). */
export interface Provenance {
  /** The remote URL without user information, query or fragment (`https://github.com/acme/skills.git`). */
  readonly source: string;
  /** The ref as configured: a branch, tag, full ref or commit id; `HEAD` for the default branch. */
  readonly ref: string;
  /** Full id of the commit whose tree is served. */
  readonly commit: string;
  /** The served subdirectory of the repository, `''` for the whole tree. */
  readonly subdir: string;
  /**
   * Who signed the commit, with `--git-allowed-signers` (docs/git-roots.md, "Verified commits"): the principal the
   * allowed signers file lists for the key, and the key's fingerprint. Absent without the option.
   */
  readonly signer?: { readonly principal: string; readonly key: string };
}

/**
 * The `_meta` object to merge into an entry of a tree with this provenance.
 *
 * @returns `{ "dev.skills-serve/source": { source, ref, commit, subdir[, signer] } }` (frozen).
 */
export function provenanceMeta(provenance: Provenance): Readonly<Record<string, Provenance>> {
  return Object.freeze({ [PROVENANCE_META_KEY]: Object.freeze({ ...provenance }) });
}
