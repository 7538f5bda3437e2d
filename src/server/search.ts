/**
 * `search_skills` for hosts without the Skills extension: full-text search over the served skills' names,
 * descriptions and `SKILL.md` headings, so that a model facing a catalog too large for the instructions can find the
 * skill a task needs. Ranking is MiniSearch's (BM25+ over the three fields, with field boosts), not ours.
 *
 * The index follows the catalog lazily: each search first brings it up to the snapshot it is asked about, adding,
 * replacing and discarding only the skills whose `SKILL.md` digest, name or description changed since the last one.
 */
import MiniSearch from 'minisearch';
import type { FileRecord, SkillRecord, Snapshot } from '../index/types.js';

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
  'a an and are as at be by can do for from how i in into is it its me my of on or our so that the their them then this to use used uses using want when which with you your'.split(' '),
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
  if (lower.length > 3 && lower.endsWith('s') && !lower.endsWith('ss') && !lower.endsWith('is') && !lower.endsWith('us')) return lower.slice(0, -1);
  return lower;
}

/**
 * The ATX headings of a `SKILL.md` (`# Title` … `###### Detail`), in order, without their `#` marks: the outline a
 * search matches besides the name and description. Frontmatter and fenced code blocks are skipped (a `# comment`
 * in a shell example is not a heading).
 *
 * @param markdown the whole `SKILL.md` text.
 */
export function skillHeadings(markdown: string): string[] {
  const lines = markdown.split(/\r?\n/u);
  let start = 0;
  if (lines[0]?.trim() === '---') {
    const close = lines.findIndex((line, index) => index > 0 && /^(?:---|\.\.\.)\s*$/u.test(line));
    start = close === -1 ? 0 : close + 1;
  }
  const headings: string[] = [];
  let fence: string | undefined;
  for (const line of lines.slice(start)) {
    const fenceMark = /^ {0,3}(`{3,}|~{3,})/u.exec(line)?.[1];
    if (fenceMark !== undefined) {
      if (fence === undefined) fence = fenceMark;
      else if (fenceMark[0] === fence[0] && fenceMark.length >= fence.length) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/u.exec(line)?.[1];
    if (heading !== undefined && heading !== '') headings.push(heading);
  }
  return headings;
}

interface SearchDocument {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly headings: string;
}

/** What a skill was indexed from: re-indexed when any of these changes. */
interface IndexedFrom {
  readonly digest: string | undefined;
  readonly name: string;
  readonly description: string;
  /** The `SKILL.md` text could not be read (headings missing): try again on the next search. */
  readonly partial: boolean;
}

/**
 * Reads a skill's `SKILL.md` text (verified against its digest), or `undefined` when it cannot be read right now (a
 * rejection counts the same).
 */
export type ManifestReader = (file: FileRecord) => Promise<string | undefined>;

/** The search index of one server process, shared by every connection. */
export class SkillSearch {
  readonly #read: ManifestReader;
  readonly #index = new MiniSearch<SearchDocument>({
    fields: ['name', 'description', 'headings'],
    processTerm: searchTerm,
  });
  readonly #indexed = new Map<string, IndexedFrom>();
  #synced: Snapshot | undefined;
  #queue: Promise<void> = Promise.resolve();

  /** @param read how `SKILL.md` texts are read for their headings. */
  constructor(read: ManifestReader) {
    this.#read = read;
  }

  /**
   * The skills of `snapshot` that best match `query`, best first; equal scores in URI order.
   *
   * @param snapshot the snapshot the call is answered from (the index is brought up to it first).
   * @param query words to look for (at most {@link MAX_QUERY_CHARS} characters); a term of 3 or more characters also
   *   matches words it starts, one of 5 to 40 also matches words within a fifth of its length in edits.
   * @param limit most results (1…{@link MAX_SEARCH_LIMIT}).
   * @returns the matching skills (possibly none).
   */
  async search(snapshot: Snapshot, query: string, limit: number): Promise<SkillRecord[]> {
    await this.#syncTo(snapshot);
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
    return MiniSearch.getDefault('tokenize')(query).some((term: string) => searchTerm(term) !== null);
  }

  /** Serializes syncs: concurrent searches wait for one another's index updates. */
  #syncTo(snapshot: Snapshot): Promise<void> {
    const next = this.#queue.then(() => this.#sync(snapshot));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #sync(snapshot: Snapshot): Promise<void> {
    if (this.#synced === snapshot) return;
    for (const uri of [...this.#indexed.keys()]) {
      if (!snapshot.skills.has(uri)) {
        this.#index.discard(uri);
        this.#indexed.delete(uri);
      }
    }
    for (const skill of snapshot.ordered) {
      const uri = skill.entry.uri;
      const manifest = snapshot.files.get(uri);
      const before = this.#indexed.get(uri);
      if (before !== undefined && !before.partial && before.digest === manifest?.digest && before.name === skill.name && before.description === skill.description) continue;
      const text = manifest === undefined ? undefined : await this.#read(manifest).catch(() => undefined);
      const document: SearchDocument = { id: uri, name: skill.name, description: skill.description, headings: text === undefined ? '' : skillHeadings(text).join('\n') };
      if (before === undefined) this.#index.add(document);
      else this.#index.replace(document);
      this.#indexed.set(uri, { digest: manifest?.digest, name: skill.name, description: skill.description, partial: text === undefined });
    }
    this.#synced = snapshot;
  }
}
