/**
 * `search_skills` for hosts without the Skills extension: full-text search over the served skills' names,
 * descriptions and `SKILL.md` headings, so that a model facing a catalog too large for the instructions can find the
 * skill a task needs. Ranking is MiniSearch's (BM25+ over the three fields, with field boosts), not ours.
 *
 * The index follows the catalog lazily: each search first brings it up to the snapshot it is asked about, adding,
 * replacing and discarding only the skills whose record changed since the last one (records are immutable: an
 * unchanged skill keeps its record from snapshot to snapshot). Headings come from the record (`headingsOf`, read
 * when the skill was indexed), so a search never reads a file.
 *
 * Results come in pages of `limit`; a page with more hits after it carries an opaque cursor for the next one
 * ({@link SkillSearch.page}). The cursor holds the offset of the next hit and a fingerprint of the query and of the
 * whole ranked list of hits: the next page is the one that follows only while the hits are still those, in that
 * order (a search is answered from the current snapshot, and a change of the catalog may re-rank every hit). So a
 * cursor holds for a given snapshot and query, and on any server (a replica behind stateless HTTP) whose hits for that
 * query are the same; otherwise the call is refused as stale, never answered with hits skipped or repeated.
 */
import { createHash } from 'node:crypto';

import MiniSearch from 'minisearch';

import { SkillsServeError } from '../../errors.js';
import { type PageBudget, pageEnd } from '../../index/snapshot.js';
import type { SkillRecord, Snapshot } from '../../index/types.js';
import { baseOf } from '../visibility.js';

/** Results a search page holds when the call gives no `limit`. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Most results one search page holds (more come through its `nextCursor`). */
export const MAX_SEARCH_LIMIT = 50;

/** One page of a search: its hits, best first, and the cursor of the next page when there are more. */
export interface SearchPage {
  readonly skills: readonly SkillRecord[];
  readonly nextCursor?: string;
}

/** What a search cursor's text starts with, before base64url (so that no other cursor of ours is taken for one). */
const SEARCH_CURSOR_PREFIX = 'search:';
/** Longest search cursor accepted: base64url of the prefix, an offset and two fingerprints. */
const MAX_SEARCH_CURSOR_LENGTH = 128;
/** A cursor's text: the offset of the next hit, then the query's and the hits' fingerprints. */
const SEARCH_CURSOR_TEXT = /^search:(0|[1-9]\d{0,8}):([\w-]{16}):([\w-]{16})$/u;

/** A short fingerprint of `text` (the first 96 bits of its SHA-256, base64url): what a cursor compares. */
function fingerprint(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 16);
}

/** What a search cursor says. */
interface SearchCursor {
  readonly offset: number;
  readonly query: string;
  readonly hits: string;
}

function encodeSearchCursor(cursor: SearchCursor): string {
  return Buffer.from(`${SEARCH_CURSOR_PREFIX}${cursor.offset}:${cursor.query}:${cursor.hits}`, 'utf8').toString(
    'base64url',
  );
}

/** @throws SkillsServeError `INVALID_CURSOR` for anything {@link encodeSearchCursor} did not make. */
function decodeSearchCursor(cursor: string): SearchCursor {
  const invalid = () => new SkillsServeError('INVALID_CURSOR', 'Invalid cursor: it was not issued by this server');
  if (cursor.length === 0 || cursor.length > MAX_SEARCH_CURSOR_LENGTH || !/^[\w-]+$/u.test(cursor)) throw invalid();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = SEARCH_CURSOR_TEXT.exec(text);
  if (match === null || Buffer.from(text, 'utf8').toString('base64url') !== cursor) throw invalid();
  return { offset: Number(match[1]), query: match[2] as string, hits: match[3] as string };
}

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
   * The first `limit` skills of `snapshot` that best match `query` (the first {@link SkillSearch.page}).
   *
   * @returns the matching skills (possibly none).
   */
  search(snapshot: Snapshot, query: string, limit: number): SkillRecord[] {
    return [...this.page(snapshot, query, limit).skills];
  }

  /**
   * One page of the skills of `snapshot` that match `query`, best first; equal scores in URI order.
   *
   * @param snapshot the snapshot the call is answered from (the index is brought up to it first; for a view, to the
   *   whole snapshot it was cut from, and only the skills the view sees are returned).
   * @param query words to look for (at most {@link MAX_QUERY_CHARS} characters); a term of 3 or more characters also
   *   matches words it starts, one of 5 to 40 also matches words within a fifth of its length in edits.
   * @param limit most results in the page (1…{@link MAX_SEARCH_LIMIT}).
   * @param cursor the `nextCursor` of the previous page, or `undefined` for the first page. A cursor of another query
   *   continues it only when that query has exactly the same hits.
   * @returns the page (possibly empty), with `nextCursor` when more hits follow it.
   * @param budget what the page's hits may add up to (at least one hit a page), as `list_skills` pages are bounded.
   * @throws SkillsServeError `INVALID_CURSOR` for a cursor this server did not issue, one issued for another query,
   *   and one whose hits are no longer those it was issued for (the catalog changed in a way that changed them).
   */
  page(
    snapshot: Snapshot,
    query: string,
    limit: number,
    cursor?: string,
    budget?: PageBudget<SkillRecord>,
  ): SearchPage {
    const hits = this.#hits(snapshot, query);
    let hitsKey: string | undefined;
    const hitsFingerprint = (): string => (hitsKey ??= fingerprint(hits.map((hit) => hit.uri).join('\n')));
    let start = 0;
    if (cursor !== undefined) {
      const at = decodeSearchCursor(cursor);
      if (at.hits !== hitsFingerprint()) {
        throw new SkillsServeError(
          'INVALID_CURSOR',
          at.query === fingerprint(query)
            ? 'Stale cursor: the skills matching this query changed since it was issued'
            : 'Invalid cursor: it was issued for another query',
        );
      }
      if (at.offset === 0 || at.offset >= hits.length)
        throw new SkillsServeError('INVALID_CURSOR', 'Invalid cursor: it was not issued by this server');
      start = at.offset;
    }
    const end = pageEnd(hits, start, limit, budget);
    const skills = hits.slice(start, end);
    if (end === hits.length) return { skills };
    return {
      skills,
      nextCursor: encodeSearchCursor({ offset: end, query: fingerprint(query), hits: hitsFingerprint() }),
    };
  }

  /** Every skill of `snapshot` a model may load that matches `query`, best first; equal scores in URI order. */
  #hits(snapshot: Snapshot, query: string): SkillRecord[] {
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
      // A skill whose author disabled model invocation is never offered to a model.
      if (skill?.modelInvocable === true) found.push(skill);
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
