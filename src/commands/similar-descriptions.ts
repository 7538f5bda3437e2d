/**
 * Near-duplicate descriptions, for `check` (docs/rules.md, `description-near-duplicate`): a model picks a skill by its
 * description, so two skills described alike are picked at random. The measure is the Jaccard similarity of the two
 * descriptions' sets of word pairs (adjacent words, lowercased, words being runs of Unicode letters and digits; a
 * one-word description is its word): |A ∩ B| / |A ∪ B|. Pairs at or above {@link NEAR_DUPLICATE} are reported. On the
 * shared corpus the most alike pair of distinct skills scores 0.12; a 17-word description with one word swapped
 * for another scores 0.79 against the original (`test/e2e/check.test.ts`).
 *
 * Pairs are found with a prefix filter (Chaudhuri et al., "A Primitive Operator for Similarity Joins", 2006): with the
 * word pairs of each description sorted rarest first, two sets whose similarity reaches t share a pair among the first
 * |s| - ceil(t·|s|) + 1 of each, so only skills sharing such a pair are compared. A catalog of 10,000 skills is not
 * compared pair by pair.
 */
import type { Diagnostic, SkillRecord } from '../index/types.js';

/** The similarity at or above which two descriptions are near duplicates. */
export const NEAR_DUPLICATE = 0.5;

/**
 * The near-duplicate warnings of a catalog: one per skill that has a near duplicate listed before it, naming the most
 * alike of those (the first on a tie) and how many more there are, so N alike skills make N - 1 warnings, not N² / 2.
 *
 * @param skills the served skills, in `skills/list` order.
 * @param warn makes the diagnostic of `skill`, whose description is `similarity` (0 to 1) like `like`'s, with `more`
 *   other earlier skills at or above the threshold.
 */
export function similarDescriptions(
  skills: readonly SkillRecord[],
  warn: (skill: SkillRecord, like: SkillRecord, similarity: number, more: number) => Diagnostic,
): Diagnostic[] {
  const sets = skills.map((skill) => wordPairs(skill.description));
  const frequency = new Map<string, number>();
  for (const set of sets) for (const pair of set) frequency.set(pair, (frequency.get(pair) ?? 0) + 1);
  const index = new Map<string, number[]>();
  const found: Diagnostic[] = [];
  sets.forEach((set, at) => {
    const ordered = [...set].sort(
      (a, b) => (frequency.get(a) as number) - (frequency.get(b) as number) || (a < b ? -1 : 1),
    );
    const prefix = ordered.slice(0, ordered.length - Math.ceil(NEAR_DUPLICATE * ordered.length) + 1);
    const candidates = new Set<number>();
    for (const pair of prefix) for (const other of index.get(pair) ?? []) candidates.add(other);
    let best: { other: number; similarity: number } | undefined;
    let matches = 0;
    for (const other of [...candidates].sort((a, b) => a - b)) {
      // One folder served under two skill paths (duplicate-root, nested-root say so) is one skill, not two alike.
      if ((skills[other] as SkillRecord).dirReal === (skills[at] as SkillRecord).dirReal) continue;
      const similarity = jaccard(set, sets[other] as Set<string>);
      if (similarity < NEAR_DUPLICATE) continue;
      matches++;
      if (best === undefined || similarity > best.similarity) best = { other, similarity };
    }
    if (best !== undefined)
      found.push(warn(skills[at] as SkillRecord, skills[best.other] as SkillRecord, best.similarity, matches - 1));
    for (const pair of prefix) {
      const list = index.get(pair);
      if (list === undefined) index.set(pair, [at]);
      else list.push(at);
    }
  });
  return found;
}

/** The set of adjacent word pairs of a text (its one word, for a text of one word). */
export function wordPairs(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const pairs = new Set<string>();
  if (words.length === 1) pairs.add(words[0]);
  for (let at = 0; at + 1 < words.length; at++) pairs.add(`${words[at] as string} ${words[at + 1] as string}`);
  return pairs;
}

/** |A ∩ B| / |A ∪ B| (0 for two empty sets). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const item of a) if (b.has(item)) shared++;
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : shared / union;
}
