/**
 * `--auth-claims FILE`: which skills a token's claims show (docs/http.md, "Claims to skills"). The file extends the
 * `--http-tokens` format: each entry names a claim and a value instead of a token, with the same `name` and
 * `prefixes`:
 *
 *   { "claims": [ { "name": "billing", "claim": "groups", "value": "billing", "prefixes": ["acme/billing"] },
 *                 { "name": "ops", "claim": "realm_access.roles", "value": "admin", "prefixes": ["*"] } ] }
 *
 * `claim` is a claim name, or a dotted path into nested objects; a token matches an entry when that claim is the value,
 * or a list holding it, or (for `scope`) a space-separated string holding it. A token sees the union of the prefixes
 * of every entry it matches; one {@link Visibility} object per distinct set of prefixes is made and kept, so tokens
 * with the same groups share one view (and its handler and memos). Pure but for reading the file.
 */
import { readFileSync } from 'node:fs';

import type { JWTPayload } from 'jose';

import type { Visibility } from '../../server/visibility.js';
import { parsePrefixes } from '../http-tokens.js';

/** One entry of the file. */
interface ClaimRule {
  readonly name: string;
  readonly path: readonly string[];
  readonly value: string;
  readonly prefixes: readonly (readonly string[])[];
}

/**
 * Parses the claims file's text.
 *
 * @returns one rule per entry.
 * @throws Error naming the entry and what is wrong.
 */
export function parseClaimsFile(text: string): ClaimRule[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('not JSON');
  }
  const entries = (parsed as { claims?: unknown } | null)?.claims;
  if (!Array.isArray(entries) || entries.length === 0)
    throw new Error('expected { "claims": [ { "name", "claim", "value", "prefixes" }, … ] } with at least one entry');
  return entries.map((item: unknown, index) => {
    const { name, claim, value, prefixes } = (item ?? {}) as Record<string, unknown>;
    const label = typeof name === 'string' && name !== '' ? name : `claims[${index}]`;
    if (typeof name !== 'string' || name === '') throw new Error(`claims[${index}]: "name" must be a non-empty string`);
    if (typeof claim !== 'string' || claim === '' || claim.split('.').includes(''))
      throw new Error(`${label}: "claim" must be a claim name or a dotted path (groups, realm_access.roles)`);
    if (typeof value !== 'string' || value === '') throw new Error(`${label}: "value" must be a non-empty string`);
    return { name, path: claim.split('.'), value, prefixes: parsePrefixes(label, prefixes) };
  });
}

/** Whether the claim at `path` holds `value` (equal, in a list, or a word of a space-separated `scope`). */
function holds(claims: Readonly<JWTPayload>, path: readonly string[], value: string): boolean {
  let at: unknown = claims;
  for (const key of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, key)) return false;
    at = (at as Record<string, unknown>)[key];
  }
  if (Array.isArray(at)) return at.includes(value);
  if (typeof at !== 'string') return false;
  return at === value || (path.length === 1 && path[0] === 'scope' && at.split(' ').includes(value));
}

/** The views of the rules of one file. */
export class ClaimViews {
  readonly #rules: readonly ClaimRule[];
  readonly #views = new Map<string, Visibility>();

  /**
   * @param file the claims file, read once at start.
   * @throws Error when it cannot be read or parsed (the CLI exits 2 with the message).
   */
  constructor(file: string) {
    this.#rules = parseClaimsFile(readFileSync(file, 'utf8'));
  }

  /** Each entry as a view of its own: its name and its prefixes, in the file's order (for a prefix review). */
  get entries(): readonly Visibility[] {
    return this.#rules.map((rule) => ({ name: rule.name, prefixes: rule.prefixes }));
  }

  /** How many distinct views have been made and kept. */
  get size(): number {
    return this.#views.size;
  }

  /**
   * The view of a token's claims.
   *
   * @returns the one view object of that set of prefixes (`name`: the matched entries' names joined by `+`), or
   *   `undefined` when the token matches no entry (it may see nothing: a 403).
   */
  viewOf(claims: Readonly<JWTPayload>): Visibility | undefined {
    const names: string[] = [];
    const prefixes = new Map<string, readonly string[]>();
    for (const rule of this.#rules) {
      if (!holds(claims, rule.path, rule.value)) continue;
      names.push(rule.name);
      for (const prefix of rule.prefixes) prefixes.set(prefix.join('/'), prefix);
    }
    if (names.length === 0) return undefined;
    const everything = prefixes.has('');
    const sorted = everything ? [[]] : [...prefixes.keys()].sort().map((key) => prefixes.get(key) ?? []);
    const key = JSON.stringify(sorted);
    let view = this.#views.get(key);
    if (view === undefined) {
      view = Object.freeze({
        name: [...new Set(names)].join('+'),
        prefixes: Object.freeze(sorted.map((prefix) => Object.freeze([...prefix]))),
      });
      this.#views.set(key, view); // at most one per subset of the file's entries
    }
    return view;
  }
}
