/**
 * Discoverability, measured in every host: a skill helps only if its name and description reach the model before it
 * acts. For a host's first model request (the main agent turn: see {@link firstModelRequest}), this counts how many
 * times each served skill is described (see {@link describedCounts}), and reads from the relay log what the server
 * answered (`tools/list`: the catalog in `read_skill`'s description), so that the expectation follows the wire, not
 * the code under test: every skill the catalog names is described exactly once, they are the first skills in
 * `skills/list` order, the others are described nowhere, and when some do not fit, the request says how many more
 * there are and how to find them.
 */
import { readFileSync } from 'node:fs';

import { expect } from 'vitest';

import type { HostUser } from './harness.js';
import { type Conversation, conversationOf } from './model-api.js';

/** A served skill as `skills-serve manifest` lists it (in `skills/list` order). */
export interface ServedSkill {
  readonly name: string;
  readonly description: string;
  /** The SKILL.md URI. */
  readonly uri: string;
}

/** How much of a longer description must reach the model for its skill to count as described (hosts cut). */
export const DESCRIPTION_KEY_CHARS = 120;

/** How far before its description a skill's name may end (room for a shared name's URI: `name (skill://…): `). */
export const NAME_GAP_CHARS = 200;

/** A description as the model is shown it: whitespace collapsed, the first {@link DESCRIPTION_KEY_CHARS} characters. */
export function descriptionKey(description: string): string {
  return collapse(description).slice(0, DESCRIPTION_KEY_CHARS);
}

/** Every run of whitespace as one space, trimmed (as the server shows descriptions outside `skills/list`). */
export function collapse(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/** Every string value of a parsed JSON body (object keys left out), depth first. */
export function jsonStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(jsonStrings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(jsonStrings);
  return [];
}

/**
 * How many times each skill is described in a request body: the number of places, over every string value of the
 * body (system prompt, tool descriptions, messages) with its whitespace collapsed, where the skill's
 * {@link descriptionKey} occurs and the skill's name, as a whole word (no letter, digit, `_` or `-` either side), ends
 * at most {@link NAME_GAP_CHARS} characters before it. A whole description that is shorter than the key ends where
 * the description ends, so "…task 1. Use when…" is not found inside "…task 11. Use when…".
 *
 * @returns one count per skill, in the order of `skills`.
 */
export function describedCounts(body: unknown, skills: readonly ServedSkill[]): number[] {
  const texts = jsonStrings(body).map(collapse);
  return skills.map((skill) => {
    const key = descriptionKey(skill.description);
    const name = new RegExp(`(?<![\\w-])${escapeRegExp(skill.name)}(?![\\w-])`, 'gu');
    let count = 0;
    for (const text of texts) {
      for (let at = text.indexOf(key); at !== -1; at = text.indexOf(key, at + key.length)) {
        name.lastIndex = Math.max(0, at - NAME_GAP_CHARS - skill.name.length);
        const match = name.exec(text);
        if (match !== null && match.index + skill.name.length <= at) count++;
      }
    }
    return count;
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

/**
 * A host's first model request: the first request, in a model API, that offers tools and whose user text holds
 * `prompt` (what the user typed). That leaves out auxiliary requests: Gemini CLI's router rating (`:generateContent`,
 * not a model turn), opencode's title generation (no tools), Claude Code's `/api/hello` probe.
 *
 * @param from how many model requests to skip (those of earlier runs of the same user).
 */
export function firstModelRequest(
  user: HostUser,
  prompt: string,
  from = 0,
): { readonly conversation: Conversation; readonly bytes: number; readonly at: number | undefined } | undefined {
  for (const request of user.modelRequests().slice(from)) {
    const conversation = conversationOf(request);
    if (conversation === undefined || conversation.tools.length === 0) continue;
    if (!conversation.userTexts.some((text) => text.includes(prompt))) continue;
    return { conversation, bytes: Buffer.byteLength(request.body), at: request.at };
  }
  return undefined;
}

/** What the server answered in the last `tools/list` on the wire: the catalog in `read_skill`'s description. */
export interface WireCatalog {
  /** The skills the catalog names, as indexes into the served skills (manifest order). */
  readonly shown: readonly number[];
  /** The count in "N more: find them with search_skills", or 0 when the catalog names every skill. */
  readonly more: number;
}

/** The sentence `read_skill`'s description carries when not every skill fits. */
export function moreSentence(more: number): string {
  return `${more} more: find them with search_skills`;
}

/**
 * Reads the catalog of the last `tools/list` result the server sent in its last start (the run measured): each
 * `- name: description` line (or `- name (uri): description` for a shared name) matched to the served skill it names
 * exactly.
 *
 * @throws when that start answered no `tools/list` with `read_skill`, or a line names no served skill.
 */
export function wireCatalog(user: HostUser, skills: readonly ServedSkill[]): WireCatalog {
  const starts = user.serverStarts();
  const result = user
    .exchanges()
    .filter((exchange) => exchange.start === starts && exchange.method === 'tools/list')
    .flatMap((exchange) => (exchange.answer === undefined ? [] : [exchange.answer.message['result']]))
    .at(-1) as { tools?: { name: string; description?: string }[] } | undefined;
  const description = result?.tools?.find((tool) => tool.name === 'read_skill')?.description;
  if (description === undefined)
    throw new Error(`the server's last start (of ${starts}) answered no tools/list with read_skill`);
  const lines = description.split('\n- ').slice(1);
  const shown = lines.map((line) => {
    const index = skills.findIndex(
      (skill) =>
        line === `${skill.name}: ${collapse(skill.description)}` ||
        line === `${skill.name} (${skill.uri}): ${collapse(skill.description)}`,
    );
    if (index === -1) throw new Error(`read_skill's catalog line "- ${line}" names no served skill`);
    return index;
  });
  const more = /(\d+) more: find them with search_skills/u.exec(description);
  return { shown, more: more === null ? 0 : Number(more[1]) };
}

/** One host's first request, measured. */
export interface Measured {
  /** Times each served skill is described, in manifest order. */
  readonly counts: readonly number[];
  /** Skills described at least once. */
  readonly described: number;
  /** Skills described more than once. */
  readonly twice: number;
  readonly bytes: number;
  /** Whether some string of the request says how many more skills there are and how to find them. */
  readonly saysMore: (more: number) => boolean;
}

/** Measures a first model request (see {@link firstModelRequest}) against the served skills. */
export function measure(
  request: { conversation: Conversation; bytes: number },
  skills: readonly ServedSkill[],
): Measured {
  const counts = describedCounts(request.conversation.body, skills);
  const texts = jsonStrings(request.conversation.body);
  return {
    counts,
    described: counts.filter((count) => count > 0).length,
    twice: counts.filter((count) => count > 1).length,
    bytes: request.bytes,
    saysMore: (more) => texts.some((text) => text.includes(moreSentence(more))),
  };
}

/** The line the test output quotes for one host and tree. */
export function reportLine(host: string, tree: string, measured: Measured): string {
  return `first model request: ${host} on ${tree}: ${measured.described} of ${measured.counts.length} skills described, ${measured.twice} twice (request ${measured.bytes} bytes)`;
}

/**
 * The counts the invariant expects: the skills the wire catalog names described once each, every other skill not at
 * all.
 */
export function expectedCounts(catalog: WireCatalog, skills: readonly ServedSkill[]): number[] {
  const shown = new Set(catalog.shown);
  return skills.map((_, index) => (shown.has(index) ? 1 : 0));
}

/** When the server's last start answered what (ms after the relay started), and when the first model request came. */
export interface Timeline {
  /** `initialize` or `server/discover` (Claude Code probes with `server/discover`), whichever was answered first. */
  readonly discovered: { readonly method: string; readonly at: number } | undefined;
  readonly toolsList: number | undefined;
  /** The first model request, on the same clock, or `undefined` when it came before this start or not at all. */
  readonly firstRequest: number | undefined;
}

/**
 * The timeline of the last server start in the relay log (`tee-mcp.mjs` stamps each line with `t`, ms since it
 * started, and its start record with `epoch`, so a model request stamped by the stand-in model lands on its clock).
 *
 * @param firstRequestAt when the stand-in model read the first model request (wall clock, ms).
 */
export function timeline(user: HostUser, firstRequestAt: number | undefined): Timeline {
  const starts = user.serverStarts();
  const exchanges = user.exchanges().filter((exchange) => exchange.start === starts);
  const answered = (methods: readonly string[]): { method: string; at: number } | undefined =>
    exchanges
      .flatMap((exchange) =>
        methods.includes(exchange.method) && exchange.answer !== undefined
          ? [{ method: exchange.method, at: exchange.answer.at }]
          : [],
      )
      .sort((a, b) => a.at - b.at)[0];
  const epoch = readFileSync(user.wireLog, 'utf8')
    .split('\n')
    .filter((raw) => raw !== '')
    .map((raw) => JSON.parse(raw) as { dir: string; epoch?: number })
    .findLast((record) => record.dir === 'start')?.epoch;
  const firstRequest =
    epoch === undefined || firstRequestAt === undefined || firstRequestAt < epoch ? undefined : firstRequestAt - epoch;
  return {
    discovered: answered(['initialize', 'server/discover']),
    toolsList: answered(['tools/list'])?.at,
    firstRequest,
  };
}

/** The timeline line the test output quotes. */
export function timelineLine(label: string, times: Timeline): string {
  const at = (ms: number | undefined): string => (ms === undefined ? 'never' : `${ms} ms`);
  return `server timeline: ${label}: ${times.discovered?.method ?? 'initialize'} answered at ${at(times.discovered?.at)}, tools/list at ${at(times.toolsList)}, first model request at ${at(times.firstRequest)} (after the relay started)`;
}

/** What one measurement is of: the host (and how it was run), the tree, the prompt typed, the skills served. */
export interface Measurement {
  readonly host: string;
  readonly tree: string;
  readonly prompt: string;
  /** How many model requests of earlier runs of the same user to skip. */
  readonly from: number;
  readonly skills: readonly ServedSkill[];
}

/**
 * Prints the report line of the host's first model request, then asserts the invariant against what the server
 * answered on the wire: the skills `read_skill`'s catalog names are the first ones in `skills/list` order, and the
 * rest are counted in its "N more" sentence; the request describes each of those skills exactly once and no other;
 * when some did not fit, the request says how many more there are and how to find them.
 */
export function expectDiscoverable(user: HostUser, of: Measurement): Measured {
  const request = firstModelRequest(user, of.prompt, of.from);
  if (request === undefined) throw new Error(`${of.host} sent the model no request offering tools for "${of.prompt}"`);
  const measured = measure(request, of.skills);
  process.stdout.write(`${reportLine(of.host, of.tree, measured)}\n`);
  const catalog = wireCatalog(user, of.skills);
  expect(catalog.shown.length).toBeGreaterThan(0);
  expect(catalog.shown).toEqual(catalog.shown.map((_, index) => index));
  expect(catalog.more).toBe(of.skills.length - catalog.shown.length);
  const want = expectedCounts(catalog, of.skills);
  const wrong = of.skills.flatMap((skill, index) =>
    measured.counts[index] === want[index]
      ? []
      : [`${skill.uri}: described ${measured.counts[index]} times, not ${want[index]}`],
  );
  // The first few are enough to see what went wrong (on 400 skills, all of them would be 400 lines).
  expect(wrong.slice(0, 10), `${wrong.length} skills described wrongly`).toEqual([]);
  if (catalog.more > 0) expect(measured.saysMore(catalog.more), `"${moreSentence(catalog.more)}"`).toBe(true);
  return measured;
}
