/**
 * What one connection is offered of the compat surfaces, decided from everything it has done (docs/ARCHITECTURE.md,
 * "Connections"): how much of the catalog its host holds through the Skills extension (the `skills/list` pages it
 * was answered, or the draft discovery index it read), and which `tools/list` and `prompts/list` answers it holds.
 *
 * A change of the offer reaches the host as `notifications/tools/list_changed` or `…/prompts/list_changed`, and never
 * before the answer to a request of that list still in flight: hosts re-ask a list only for a notification that
 * arrives after its answer (Claude Code drops one written before). A notification is sent only when what the host
 * was last answered differs from what it would be answered now, and once per such state.
 */
import { EXTENSION_MAX_SKILLS } from '../../hosts/profiles.js';
import { DECLINED_BY_HOSTS, extensionDecline } from '../../hosts/views.js';
import { longestResourceUriBytes } from '../../index/snapshot.js';
import type { SkillRecord } from '../../index/types.js';

/** The lists whose content depends on the offer. */
export type OfferedList = 'tools' | 'prompts';

const LISTS: readonly OfferedList[] = ['tools', 'prompts'];

/**
 * How long after a `skills/list` page with a `nextCursor` a connection that asked no further page is taken to have
 * stopped paging (ms): hosts ask for the next page as soon as they have read one.
 */
export const PAGING_PAUSE_MS = 2000;

const declinedCache = new WeakMap<SkillRecord, boolean>();

/**
 * Whether a host that lists skills through the extension declines this entry although it is served (the checks a
 * host makes beyond the entry's own rules: SEP-2640 "Limits per skill" are kept by the index already). Such a skill
 * stays offered through the compat surfaces.
 */
export function declinedByHosts(skill: SkillRecord): boolean {
  let declined = declinedCache.get(skill);
  if (declined === undefined) {
    const measured = {
      uri: skill.uri,
      manifestBytes: skill.manifestSize,
      longestUriBytes: longestResourceUriBytes(skill),
    };
    declined = extensionDecline(measured, DECLINED_BY_HOSTS) !== undefined;
    declinedCache.set(skill, declined);
  }
  return declined;
}

/** How a connection's offer reaches its host. */
export interface OfferHooks {
  /** What the connection would be answered now for `list` (the text of the tools, or the prompt names). */
  readonly current: (list: OfferedList) => string;
  /** Sends `notifications/<list>/list_changed` to the connection. */
  readonly notify: (list: OfferedList) => void;
  /** The connection stopped paging `skills/list` before the end ({@link PAGING_PAUSE_MS} after a page). */
  readonly stoppedPaging: (listed: number) => void;
}

/** One connection's offer. */
export class ConnectionOffer {
  readonly #hooks: OfferHooks;
  /** Entries of the connection's current `skills/list` listing (from its last first page on), and whether it ended. */
  #listed = 0;
  #complete = false;
  /** The `SKILL.md` URIs of the discovery-index entries the connection's host keeps, once it read the index. */
  #indexed: ReadonlySet<string> | undefined;
  readonly #inFlight = { tools: 0, prompts: 0 };
  readonly #answered: { tools?: string; prompts?: string } = {};
  readonly #notified: { tools?: string; prompts?: string } = {};
  #checkScheduled = false;
  #pagingTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** `skills/list` requests and discovery-index reads being answered, and who waits for them to end. */
  #listings = 0;
  #paging = false;
  #listingsEnded: (() => void)[] = [];

  constructor(hooks: OfferHooks) {
    this.#hooks = hooks;
  }

  /** How many skills the connection's host holds through the extension, in `skills/list` order (no index read). */
  get listed(): number {
    return this.#listed;
  }

  /** Whether the connection's host listed the whole catalog through `skills/list`. */
  get listedAll(): boolean {
    return this.#complete;
  }

  /**
   * Whether the connection's host holds `skill` through the extension, so that the compat surfaces leave it out.
   *
   * @param position the skill's place in the connection's `skills/list` order (0-based).
   */
  holds(skill: SkillRecord, position: number): boolean {
    if (this.#indexed?.has(skill.uri) === true) return true;
    return (this.#complete || position < this.#listed) && !declinedByHosts(skill);
  }

  /**
   * A `skills/list` page was answered to the connection.
   *
   * @param first it was the first page (no cursor): a new listing starts.
   * @param entries how many entries it held.
   * @param complete it was the last page.
   */
  notePage(first: boolean, entries: number, complete: boolean): void {
    clearTimeout(this.#pagingTimer);
    this.#listed = (first ? 0 : this.#listed) + entries;
    this.#complete = complete;
    // A host pages on until it holds what it keeps (`--page-size` under that makes pages smaller).
    this.#paging = !complete && !this.#closed && this.#listed < EXTENSION_MAX_SKILLS;
    if (!complete && !this.#closed) {
      this.#pagingTimer = setTimeout(() => {
        this.#paging = false;
        this.#resumeIfSettled();
        this.#hooks.stoppedPaging(this.#listed);
      }, PAGING_PAUSE_MS);
      this.#pagingTimer.unref();
    }
    this.refresh();
  }

  /**
   * The connection read the draft discovery index (`skill://index.json`).
   *
   * @param kept the `SKILL.md` URIs of the entries its host keeps.
   */
  noteIndex(kept: ReadonlySet<string>): void {
    this.#indexed = kept;
    this.refresh();
  }

  /**
   * A request that tells what the host lists (`skills/list`, a read of the discovery index) is being answered.
   *
   * @returns the call that says it was answered (after {@link notePage} or {@link noteIndex}); idempotent.
   */
  beginListing(): () => void {
    this.#listings++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#listings--;
      this.#resumeIfSettled();
    };
  }

  /** Whether a listing is being answered, or paged on by a host that keeps more than it holds yet. */
  get #listing(): boolean {
    return (this.#listings > 0 || this.#paging) && !this.#closed;
  }

  #resumeIfSettled(): void {
    if (!this.#listing) for (const resume of this.#listingsEnded.splice(0)) resume();
  }

  /**
   * Resolves once the requests read together with the caller's (a host's burst: Claude Code writes `prompts/list`,
   * `skills/list`, `resources/list` and `tools/list` at once) have reached their handlers, and the listings among them
   * have been answered (with the further pages the host asks for until it holds what it keeps, or pauses for
   * {@link PAGING_PAUSE_MS}): a `tools/list` or `prompts/list` answer then already leaves out what the host lists
   * itself, where a notification sent after it would come before the host listens (docs/ARCHITECTURE.md,
   * "Connections").
   *
   * Every message of one read of stdin reaches its handler in the promise jobs that follow that read (the serving
   * entry hands messages on from a queue of promise jobs, and no handler starts reading the disk before it has been
   * called): a check-phase callback runs after them all.
   */
  async settled(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.#listing) await new Promise<void>((resolve) => this.#listingsEnded.push(resolve));
  }

  /** A `tools/list` or `prompts/list` request of the connection is being answered. */
  begin(list: OfferedList): void {
    this.#inFlight[list]++;
  }

  /** That request was answered with `answer` (what {@link OfferHooks.current} gave when it was computed). */
  answered(list: OfferedList, answer: string): void {
    this.#answered[list] = answer;
  }

  /** The request is done (its answer is written right after the handler returns): check for a change after it. */
  end(list: OfferedList): void {
    this.#inFlight[list]--;
    this.refresh();
  }

  /**
   * Something the offer depends on changed (the catalog, what the host lists): once the promise jobs now queued have
   * run (so that the answers being sent, which are written from those jobs, go first), and before the server reads
   * anything more (so that the notification precedes the answer to any later request), each list the connection
   * holds that differs from what it would be answered now is announced.
   */
  refresh(): void {
    if (this.#checkScheduled || this.#closed) return;
    this.#checkScheduled = true;
    process.nextTick(() => {
      this.#checkScheduled = false;
      if (this.#closed) return;
      for (const list of LISTS) {
        const answered = this.#answered[list];
        if (this.#inFlight[list] > 0 || answered === undefined) continue;
        const now = this.#hooks.current(list);
        if (now === answered || now === this.#notified[list]) continue;
        this.#notified[list] = now;
        this.#hooks.notify(list);
      }
    });
  }

  /** The connection closed: no more notifications or timers. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#pagingTimer);
    this.#resumeIfSettled();
  }
}
