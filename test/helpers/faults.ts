/**
 * What fault and load tests judge reads by: the history of digests a server published per URI, which decides whether
 * a read served bytes it had already replaced (docs/ARCHITECTURE.md, "Invariants": "never serve bytes that contradict
 * the published entry").
 */
import { PublishHistory } from '../../bench/load-tracker.mjs';
import type { PublishedSkill } from './disk.js';

/** How a read's digest relates to what the server published for its URI. */
export type ReadVerdict = 'ok' | 'stale' | 'unpublished';

/**
 * The digests one server published per URI, as observed through `skills/list` / `skills/get` answers, each with
 * when it was asked and answered (`performance.now()`). A read's digest is **stale** when the server had published
 * it, then published another digest for the URI in an answer that arrived before the read was sent, and was never
 * seen publishing it again after that; it is **unpublished** when no observation ever showed it (judge reads
 * after the last observation is in). The rules are the load benchmark's (bench/load-tracker.mjs), shared.
 */
export class PublishedHistory {
  readonly #history = new PublishHistory() as {
    observe(uri: string, digest: string, requestedAt: number, answeredAt: number): void;
    judge(
      uri: string,
      digest: string,
      sentAt: number,
      written: () => boolean,
    ): 'ok' | 'stale' | 'unobserved' | 'foreign';
  };

  /** Records every file of `skills` as published between `requestedAt` and `answeredAt`. */
  observe(skills: readonly PublishedSkill[], requestedAt: number, answeredAt: number): void {
    for (const skill of skills)
      for (const file of skill.resources) this.#history.observe(file.uri, file.digest, requestedAt, answeredAt);
  }

  /** Judges a read of `uri` that returned bytes with `digest` and was sent at `sentAt`. */
  judge(uri: string, digest: string, sentAt: number): ReadVerdict {
    const verdict = this.#history.judge(uri, digest, sentAt, () => false);
    return verdict === 'ok' || verdict === 'stale' ? verdict : 'unpublished';
  }
}
