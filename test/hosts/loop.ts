/**
 * The scripted model loop every host test runs: the model's first turn loads a skill through the host's own way of
 * calling our `read_skill` tool, the next request must carry that skill's SKILL.md as the server sent it, then the
 * model reads a supporting file with `read_skill_file`, and the request after that must carry the file. The texts
 * are the files of `sample-skills/`, read from disk.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { HostUser } from './harness.js';
import { type Conversation, scriptedTurns, type ToolTurn } from './model-api.js';

/** The skill the scripted model loads, and the supporting file it reads next. */
export const LOADED = {
  name: 'report-writer',
  file: 'references/style-guide.md',
} as const;

/** The marker the scripted model looks for in the user's message before it answers with tool calls. */
export const SCRIPT_MARKER = 'SCRIPTED-SKILL-LOAD';

/** The exact texts the loop must deliver, read from the served copy of `sample-skills/` at `tree`. */
export function loadedTexts(tree: string): { skill: string; file: string } {
  const dir = path.join(tree, LOADED.name);
  return {
    skill: readFileSync(path.join(dir, 'SKILL.md'), 'utf8'),
    file: readFileSync(path.join(dir, LOADED.file), 'utf8'),
  };
}

/** What the user asks in every host. */
export const LOOP_PROMPT = `Write this week's status report (${SCRIPT_MARKER}).`;

/**
 * Scripts the model: `readSkill`, then `readSkillFile`, as the host names our two tools.
 */
export function scriptLoop(
  user: HostUser,
  names: { readonly readSkill: string; readonly readSkillFile: string },
): void {
  user.script(SCRIPT_MARKER, [
    { name: names.readSkill, arguments: { name: LOADED.name } },
    { name: names.readSkillFile, arguments: { skill: LOADED.name, path: LOADED.file } },
  ]);
}

/** What one run of the loop left: the server's answers and the model requests of the scripted conversation. */
export interface LoopOutcome {
  /** The text blocks of the server's `read_skill` and `read_skill_file` results, as sent on the wire. */
  readonly served: { readonly skill: readonly string[]; readonly file: readonly string[] };
  /** Every scripted model request, in order (the first is the user's turn). */
  readonly turns: readonly Conversation[];
  /** The tool call the model request `index` answers (its conversation's last call), or `undefined`. */
  readonly answered: (index: number) => ToolTurn | undefined;
}

/** Reads the outcome of a loop run from the wire and model logs. */
export function loopOutcome(user: HostUser): LoopOutcome {
  const texts = (tool: string): string[] => servedTexts(user, tool);
  const turns = scriptedTurns(user.modelRequests(), SCRIPT_MARKER);
  return {
    served: { skill: texts('read_skill'), file: texts('read_skill_file') },
    turns,
    answered: (index) => turns[index]?.turns.at(-1),
  };
}

/** The text blocks of the server's result to the host's first `tools/call` of `tool`, as sent on the wire. */
export function servedTexts(user: HostUser, tool: string): string[] {
  const call = user
    .exchanges()
    .find(
      (exchange) => exchange.method === 'tools/call' && (exchange.request['params'] as { name: string }).name === tool,
    );
  const result = call?.answer?.message['result'] as { content?: unknown[] } | undefined;
  return (result?.content ?? []).flatMap((block) => {
    const { type, text } = block as { type: string; text?: string };
    return type === 'text' && text !== undefined ? [text] : [];
  });
}

/** The first text block of `read_skill`'s result: the skill's URI and its other files, before the SKILL.md. */
export const SKILL_HEADER = `Skill "report-writer" at skill://report-writer/SKILL.md. Its other files, relative to skill://report-writer/ (read one with read_skill_file: uri, or skill and path):
- assets/logo.png
- references/citation-formats.md
- references/style-guide.md
- templates/report.md
- templates/sections/executive-summary.md`;

/**
 * Checks what the server answered the host's two calls: `read_skill` the header and the SKILL.md verbatim,
 * `read_skill_file` the file verbatim.
 *
 * @throws when either differs.
 */
export function checkServed(outcome: LoopOutcome, tree: string): void {
  const texts = loadedTexts(tree);
  const want = { skill: [SKILL_HEADER, texts.skill], file: [texts.file] };
  if (JSON.stringify(outcome.served) !== JSON.stringify(want))
    throw new Error(`the server answered\n${JSON.stringify(outcome.served)}\nnot\n${JSON.stringify(want)}`);
}

/** The catalog lines of `read_skill`'s description: one `- name: description` line per skill the host does not list. */
export function catalogLines(description: string | undefined): string[] {
  return (description ?? '').split('\n- ').slice(1);
}

/** The URIs the host read with `resources/read` (a host that discovers skills through the index reads it first). */
export function readUris(user: HostUser): string[] {
  return user.requests('resources/read').map((request) => (request['params'] as { uri: string }).uri);
}
