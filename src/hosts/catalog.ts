/**
 * What a host without the Skills extension is shown of a catalog, as text: the catalog in `read_skill`'s description
 * and one prompt name per skill. The compat surfaces send exactly this (`server/compat/surfaces.ts`), and
 * `check --hosts` measures it (`views.ts`), so what an author is told is what a host is sent. Pure: it reads only
 * the fields its structural types name.
 */

/** What a catalog line shows of a skill (a served skill's record is one). */
export interface NamedSkill {
  readonly name: string;
  readonly description: string;
  /** Its `SKILL.md` URI. */
  readonly uri: string;
}

/** What a prompt name is made of (a served skill's record is one). */
export interface PromptNamed {
  readonly name: string;
  /** Skill path segments, decoded (`['acme', 'billing', 'refunds']`). */
  readonly segments: readonly string[];
}

/** What `read_skill` does, before its catalog. */
export const READ_SKILL_SUMMARY =
  "Returns a skill's SKILL.md (its instructions) and the list of its other files. Name the skill by name, or by uri " +
  'when several skills share a name.';

/** The catalog heading in `read_skill`'s description, followed by one line per skill. */
export const CATALOG_HEADING = 'Skills (name: description):';

/**
 * One catalog line: `- refunds: Process refunds …` (whitespace collapsed), with the `SKILL.md` URI after the name when
 * another skill has the same name (`read_skill` needs the URI then).
 */
export function catalogLine(skill: NamedSkill, shared: boolean): string {
  return `- ${skill.name}${shared ? ` (${skill.uri})` : ''}: ${collapseWhitespace(skill.description)}`;
}

/** `read_skill`'s description, and how many catalog lines it holds. */
export interface ReadSkillCatalog {
  readonly text: string;
  /** The first `shown` skills of `unlisted` have their line in `text`, after the heading, one line each. */
  readonly shown: number;
}

/**
 * The description of `read_skill` for one connection: {@link READ_SKILL_SUMMARY}, then a catalog of the skills this
 * connection's host has not listed itself, in `skills/list` order, as many whole lines as fit, then how to find the
 * rest. Tool descriptions, unlike instructions, can be changed for a connection (`notifications/tools/list_changed`),
 * so the catalog follows what the host lists.
 *
 * @param unlisted the skills to name (all served skills for a host without the extension).
 * @param listedElsewhere how many served skills the host lists itself (through the extension).
 * @param maxChars bound of the whole text in UTF-16 code units (`--catalog-max`, at least 1,024).
 * @param shared whether a name is shared by several served skills (their lines carry the URI `read_skill` needs);
 *   default: shared among `unlisted`.
 * @returns the description, never longer than `maxChars`, and how many lines it holds; when `shown` > 0, the text
 *   ends with those lines joined by `\n`.
 */
export function readSkillCatalog(
  unlisted: readonly NamedSkill[],
  listedElsewhere: number,
  maxChars: number,
  shared: (name: string) => boolean = sharedAmong(unlisted),
): ReadSkillCatalog {
  const elsewhere =
    listedElsewhere === 0
      ? ''
      : ` The other ${listedElsewhere} skill${listedElsewhere === 1 ? ' is' : 's are'} in your host's own skill list (this tool reads them too).`;
  if (unlisted.length === 0) {
    const text =
      listedElsewhere === 0
        ? `${READ_SKILL_SUMMARY} No skills are served right now.`
        : `${READ_SKILL_SUMMARY} Every skill of this server is in your host's own skill list; this tool reads them too.`;
    return { text, shown: 0 };
  }
  const lines = unlisted.map((skill) => catalogLine(skill, shared(skill.name)));
  const tail = (shown: number): string =>
    shown === unlisted.length
      ? elsewhere
      : ` ${unlisted.length - shown} more: find them with search_skills or list_skills.${elsewhere}`;
  const text = (shown: number): string =>
    `${READ_SKILL_SUMMARY}${tail(shown)}\n\n${[CATALOG_HEADING, ...lines.slice(0, shown)].join('\n')}`;
  const whole = text(lines.length);
  if (whole.length <= maxChars) return { text: whole, shown: lines.length };
  // Showing no line gives the longest tail (its count is the largest): what is left is room for whole lines.
  let room = maxChars - text(0).length;
  let shown = 0;
  while (shown < lines.length && room >= 1 + (lines[shown] as string).length) {
    room -= 1 + (lines[shown] as string).length;
    shown++;
  }
  return { text: shown === 0 ? `${READ_SKILL_SUMMARY}${tail(0)}` : text(shown), shown };
}

/** `read_skill`'s description ({@link readSkillCatalog}'s text). */
export function readSkillDescription(
  unlisted: readonly NamedSkill[],
  listedElsewhere: number,
  maxChars: number,
  shared?: (name: string) => boolean,
): string {
  return readSkillCatalog(unlisted, listedElsewhere, maxChars, shared).text;
}

/** Whether a name is shared by several of `skills`. */
export function sharedAmong(skills: readonly { readonly name: string }[]): (name: string) => boolean {
  const counts = new Map<string, number>();
  for (const skill of skills) counts.set(skill.name, (counts.get(skill.name) ?? 0) + 1);
  return (name) => (counts.get(name) ?? 0) > 1;
}

/** Every run of whitespace (newlines of block scalars included) as one space, trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/** One prompt per served skill. */
export interface PromptSlot<T extends PromptNamed> {
  readonly name: string;
  readonly skill: T;
}

/**
 * Prompt names for `skills` (in their order, which is kept). A skill whose frontmatter name no other served skill
 * shares gets that name. Skills sharing a name get their skill path with `/` turned into `-` (`acme/billing/refunds`
 * → `acme-billing-refunds`; characters outside `[A-Za-z0-9_.-]` become `-`). A name still taken, by a unique skill
 * name or an earlier derived name, gets `-2`, `-3`, … (first free one, in `skills` order). Deterministic for a given
 * catalog; unique names never change when another skill appears, shared ones may.
 *
 * @returns one slot per skill, names unique.
 */
export function assignPromptNames<T extends PromptNamed>(skills: readonly T[]): PromptSlot<T>[] {
  const counts = new Map<string, number>();
  for (const skill of skills) counts.set(skill.name, (counts.get(skill.name) ?? 0) + 1);
  const taken = new Set(skills.filter((skill) => counts.get(skill.name) === 1).map((skill) => skill.name));
  return skills.map((skill) => {
    if (counts.get(skill.name) === 1) return { name: skill.name, skill };
    const base = skill.segments.join('-').replace(/[^\w.-]+/gu, '-');
    let name = base;
    for (let suffix = 2; taken.has(name); suffix++) name = `${base}-${suffix}`;
    taken.add(name);
    return { name, skill };
  });
}
