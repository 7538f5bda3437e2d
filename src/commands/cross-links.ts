/**
 * Links between skills, for `check` (docs/rules.md, `link-outside-skill`, `link-unserved-skill`): a skill that
 * depends on another breaks quietly where it is served or installed without it. Reads each served `SKILL.md` and
 * finds, outside fenced code blocks and code spans, (1) relative Markdown links (`[text](path)`, `![alt](path)`,
 * `[id]: path`) whose path leaves the skill's folder, and (2) `skill://` URIs that name no served skill.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { linkOutsideSkill, linkUnservedSkill } from '../index/diagnostics.js';
import type { Diagnostic, SkillRecord } from '../index/types.js';
import { buildSkillUri, decodePercent, parseSkillUri } from '../index/uri.js';

/** Inline links and images (`[text](target "title")`, `<target>` allowed) and reference definitions. */
const LINK =
  /!?\[[^\]\n]*\]\(\s*(<[^>\n]*>|[^\s)]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)|^ {0,3}\[[^\]\n]+\]:\s*(\S+)/gmu;
/** A `skill://` URI in running text. */
const SKILL_URI = /skill:\/\/[^\s)\]>"'`]+/gu;
/** A URL scheme (`https:`, `mailto:`): not a path. */
const SCHEME = /^[a-z][a-z\d+.-]*:/iu;

/**
 * The cross-skill link warnings of a catalog.
 *
 * @param skills the served skills (one view: everything `check` serves).
 * @returns one warning per offending link, in skill order then text order, each with its line and column.
 */
export function crossSkillLinks(skills: readonly SkillRecord[]): Diagnostic[] {
  const found: Diagnostic[] = [];
  for (const skill of skills) {
    const file = path.join(skill.dirReal, 'SKILL.md');
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // changed since the build: the next check sees it
    }
    const prose = withoutCode(text);
    for (const match of prose.matchAll(LINK)) {
      const raw = (match[1] ?? match[2] ?? '').replace(/^<|>$/gu, '');
      if (raw === '' || raw.startsWith('#') || SCHEME.test(raw) || raw.startsWith('/')) continue;
      const target = raw.replace(/[?#].*$/u, '');
      const rel = path.posix.normalize(decodePercent(target) ?? target);
      if (!rel.startsWith('../') && rel !== '..') continue;
      const segments = [...skill.segments];
      for (const part of rel.split('/')) {
        if (part === '..') segments.pop();
        else if (part !== '.' && part !== '') segments.push(part);
      }
      const owner = skills.find((other) => other !== skill && isPrefix(other.segments, segments));
      const { line, column } = positionOf(text, (match.index ?? 0) + match[0].indexOf(raw));
      found.push(linkOutsideSkill(file, line, column, raw, owner?.uri));
    }
    for (const match of prose.matchAll(SKILL_URI)) {
      const uri = match[0].replace(/[.,;:!?]+$/u, '');
      const segments = parseSkillUri(uri);
      if (segments === undefined || uri === 'skill://index.json') continue;
      if (skills.some((other) => isPrefix(other.segments, segments))) continue;
      const { line, column } = positionOf(text, match.index ?? 0);
      found.push(linkUnservedSkill(file, line, column, segments.length === 0 ? uri : buildSkillUri(segments)));
    }
  }
  return found;
}

/** `text` with fenced code blocks and code spans blanked (same length, newlines kept), so positions stay true. */
function withoutCode(text: string): string {
  const blank = (part: string): string => part.replace(/[^\n]/gu, ' ');
  return text
    .replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\1[^\n]*$|(?![\s\S]))/gmu, blank)
    .replace(/(`+)[^`\n]+?\1/gu, blank);
}

/** Whether `prefix` is a whole-segment prefix of `segments`. */
function isPrefix(prefix: readonly string[], segments: readonly string[]): boolean {
  return prefix.length <= segments.length && prefix.every((segment, index) => segments[index] === segment);
}

/** 1-based line and column of a character offset. */
function positionOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}
