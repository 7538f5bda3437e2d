/**
 * Per-skill usage on `/metrics` (docs/operations.md, "Usage: which skills are read"): each skill's `SKILL.md` reads by
 * view, and one series per skill served.
 */
import { Counter, Gauge, Registry } from 'prom-client';

import type { SkillRecord } from '../index/types.js';
import { SKILL_SCHEME } from '../index/uri.js';
import type { Runtime } from '../runtime.js';
import type { Visibility } from '../server/visibility.js';

/** The `view` label of a request: its view's name, `*` for one that sees everything. */
export function viewLabel(view: Visibility | undefined): string {
  return view === undefined ? '*' : view.name;
}

/** A skill's label: its skill path as in its URI (`acme/billing/refunds`). */
function skillLabel(skill: SkillRecord): string {
  return skill.rootUri.slice(SKILL_SCHEME.length);
}

/**
 * Per-skill usage: how often each skill's `SKILL.md` reached a client, by view, and one series per skill served (so
 * "never read" can be asked). Skill paths are names a view may not be allowed to see, so these series are served only
 * to a scrape that may see everything (`HttpAdapter`). At most one series per served skill and view that read it:
 * a skill's series go with the snapshot that stops serving it.
 */
export class UsageMetrics {
  readonly registry = new Registry();
  readonly #reads: Counter<'skill' | 'view'>;
  /** The views each skill's series exists for (skill label → views). */
  readonly #series = new Map<string, Set<string>>();

  constructor(runtime: Runtime) {
    const registers = [this.registry];
    this.#reads = new Counter({
      name: 'skills_serve_skill_reads_total',
      help: "Reads of a skill's SKILL.md (resources/read, the read_skill tool, its prompt), by skill path and view",
      labelNames: ['skill', 'view'],
      registers,
    });
    new Gauge({
      name: 'skills_serve_skill_info',
      help: 'One series per skill served, by skill path',
      labelNames: ['skill'],
      registers,
      collect() {
        this.reset();
        for (const skill of runtime.store.current.ordered) this.set({ skill: skillLabel(skill) }, 1);
      },
    });
    runtime.on('changed', ({ next }) => {
      for (const [skill, views] of this.#series) {
        if (next.skills.has(`${SKILL_SCHEME}${skill}/SKILL.md`)) continue;
        for (const view of views) this.#reads.remove({ skill, view });
        this.#series.delete(skill);
      }
    });
  }

  /** Counts one read of `skill`'s `SKILL.md` by a request of `view`. */
  read(skill: SkillRecord, view: string): void {
    const label = skillLabel(skill);
    let views = this.#series.get(label);
    if (views === undefined) this.#series.set(label, (views = new Set()));
    views.add(view);
    this.#reads.inc({ skill: label, view });
  }
}
