/**
 * `search_skills` for hosts without the Skills extension: full-text search over the served skills' names,
 * descriptions and `SKILL.md` headings, so that a model facing a catalog too large for the instructions can find the
 * skill a task needs. Ranking is MiniSearch's (BM25+ over the three fields, with field boosts), not ours.
 *
 * The index follows the catalog lazily: each search first brings it up to the snapshot it is asked about, adding,
 * replacing and discarding only the skills whose record changed since the last one (records are immutable: an
 * unchanged skill keeps its record from snapshot to snapshot). Headings come from the record (`headingsOf`, read
 * when the skill was indexed), so a search never reads a file.
 */
import MiniSearch from 'minisearch';

import type { SkillRecord, Snapshot } from '../../index/types.js';
import { baseOf } from '../visibility.js';

/** Results a search returns when the call gives no `limit`. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Most results one search returns. */
export const MAX_SEARCH_LIMIT = 50;

/** Longest query accepted (characters): a task described in a few words fits many times over. */
export const MAX_QUERY_CHARS = 1000;

/** How much a match in each field counts (a name match outweighs a description match, which outweighs a heading). */
export const SEARCH_BOOST = { name: 3, description: 1.5, headings: 1 } as const;

/** Words too common to tell skills apart; dropped from documents and queries alike. */
const STOP_WORDS = new Set(
  'a an and are as at be by can do for from how i in into is it its me my of on or our so that the their them then this to use used uses using want when which with you your'.split(
    ' ',
  ),
);

/**
 * One term as indexed and searched: lower case, stop words dropped, a plural `s` removed (`refunds` and `refund`
 * meet; `process`, `css` and `analysis`-like words ending in `ss` or `is` keep theirs).
 *
 * @returns the term, or `null` to drop it.
 */
export function searchTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (lower === '' || STOP_WORDS.has(lower)) return null;
  if (
    lower.length > 3 &&
    lower.endsWith('s') &&
    !lower.endsWith('ss') &&
    !lower.endsWith('is') &&
    !lower.endsWith('us')
  )
    return lower.slice(0, -1);
  return lower;
}

interface SearchDocument {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly headings: string;
}

/** The search index of one server process, shared by every connection. */
export class SkillSearch {
  readonly #index = new MiniSearch<SearchDocument>({
    fields: ['name', 'description', 'headings'],
    processTerm: searchTerm,
  });
  /** The record each indexed skill was indexed from, by URI. */
  readonly #indexed = new Map<string, SkillRecord>();
  #synced: Snapshot | undefined;

  /**
   * The skills of `snapshot` that best match `query`, best first; equal scores in URI order.
   *
   * @param snapshot the snapshot the call is answered from (the index is brought up to it first; for a view, to the
   *   whole snapshot it was cut from, and only the skills the view sees are returned).
   * @param query words to look for (at most {@link MAX_QUERY_CHARS} characters); a term of 3 or more characters also
   *   matches words it starts, one of 5 to 40 also matches words within a fifth of its length in edits.
   * @param limit most results (1…{@link MAX_SEARCH_LIMIT}).
   * @returns the matching skills (possibly none).
   */
  search(snapshot: Snapshot, query: string, limit: number): SkillRecord[] {
    this.#sync(baseOf(snapshot));
    const results = this.#index.search(query, {
      boost: { ...SEARCH_BOOST },
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 && term.length <= 40 ? 0.2 : false),
      combineWith: 'OR',
    });
    results.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const found: SkillRecord[] = [];
    for (const result of results) {
      const skill = snapshot.skills.get(result.id as string);
      if (skill !== undefined) found.push(skill);
      if (found.length === limit) break;
    }
    return found;
  }

  /** Whether `query` holds at least one searchable word (not only stop words or punctuation). */
  static searchable(query: string): boolean {
    return (MiniSearch.getDefault('tokenize') as (text: string) => string[])(query).some(
      (term: string) => searchTerm(term) !== null,
    );
  }

  /** Brings the index up to `snapshot` (synchronously: no search can see it half updated). */
  #sync(snapshot: Snapshot): void {
    if (this.#synced === snapshot) return;
    for (const uri of [...this.#indexed.keys()]) {
      if (!snapshot.skills.has(uri)) {
        this.#index.discard(uri);
        this.#indexed.delete(uri);
      }
    }
    for (const skill of snapshot.ordered) {
      const before = this.#indexed.get(skill.uri);
      if (before === skill) continue;
      const document: SearchDocument = {
        id: skill.uri,
        name: skill.name,
        description: skill.description,
        headings: skill.headings,
      };
      if (before === undefined) this.#index.add(document);
      else this.#index.replace(document);
      this.#indexed.set(skill.uri, skill);
    }
    this.#synced = snapshot;
  }
}
