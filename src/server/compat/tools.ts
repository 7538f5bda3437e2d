/**
 * The read-only tools offered to hosts without the Skills extension (`--compat`): `list_skills`, `search_skills`,
 * `read_skill` and `read_skill_file`. Definitions and call handling only; which clients see them is decided in
 * `surfaces.ts`. Descriptions in results have their whitespace collapsed (the frontmatter stays verbatim in
 * `skills/list`). Every failure a model can act on (unknown skill, ambiguous name, bad cursor, unreadable file) is a
 * tool result with `isError: true` (MCP "Tools" › "Error handling"); an unknown tool name is left to the caller
 * (-32602).
 */
import { type CallToolResult, type ContentBlock, type Tool } from '@modelcontextprotocol/server';
import type { SkillReadResult } from '@modelcontextprotocol/server/ext/skills';

import { SkillsServeError, toToolError } from '../../errors.js';
import { collapseWhitespace, READ_SKILL_SUMMARY } from '../../hosts/catalog.js';
import { ALWAYS_LOAD_META, STRICTEST_TOOL_RESULT_CHARS } from '../../hosts/profiles.js';
import { pageOf } from '../../index/snapshot.js';
import type { SkillRecord, Snapshot } from '../../index/types.js';
import { directoryText, resolveFile, resolveSkill, skillFilesText } from './catalog.js';
import { DEFAULT_SEARCH_LIMIT, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, SkillSearch } from './search.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const STRING = (description: string) => ({ type: 'string', description }) as const;

/** The `{ skills: [{ name, description, uri }], nextCursor? }` shape `list_skills` and `search_skills` return. */
const SKILL_LIST_SCHEMA = {
  type: 'object',
  properties: {
    skills: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, description: { type: 'string' }, uri: { type: 'string' } },
        required: ['name', 'description', 'uri'],
      },
    },
    nextCursor: { type: 'string' },
  },
  required: ['skills'],
} as const;

/**
 * Every tool asks to be shown to the model in full from the first request: Claude Code otherwise shows an MCP tool as
 * a bare name behind its tool search, and the model never learns which skills `read_skill` offers
 * (docs/hosts/claude-code.md).
 */
const ALWAYS_LOAD = { [ALWAYS_LOAD_META]: true } as const;

const TOOLS: Tool[] = [
  {
    name: 'list_skills',
    title: 'List skills',
    description:
      'Lists the Agent Skills this server provides: name, description and the skill:// URI of each SKILL.md, in pages. ' +
      "Read a skill's SKILL.md with read_skill before doing a task its description matches.",
    inputSchema: {
      type: 'object',
      properties: { cursor: STRING('nextCursor of the previous page, to get the next one') },
    },
    outputSchema: SKILL_LIST_SCHEMA,
    annotations: { title: 'List skills', ...READ_ONLY },
    _meta: ALWAYS_LOAD,
  },
  {
    name: 'search_skills',
    title: 'Search skills',
    description:
      'Finds the Agent Skills that match a few words from the task, searching their names, descriptions and SKILL.md ' +
      'headings; best matches first, in pages (pass nextCursor as cursor, with the same query, for more). Read the ' +
      'one that fits with read_skill before doing the task.',
    inputSchema: {
      type: 'object',
      properties: {
        query: STRING('words describing the task, e.g. "summarise a PDF contract"'),
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_SEARCH_LIMIT,
          description: `most results per page (default ${DEFAULT_SEARCH_LIMIT})`,
        },
        cursor: STRING('nextCursor of the previous page of the same query, to get the next one'),
      },
      required: ['query'],
    },
    outputSchema: SKILL_LIST_SCHEMA,
    annotations: { title: 'Search skills', ...READ_ONLY },
    _meta: ALWAYS_LOAD,
  },
  {
    name: 'read_skill',
    title: 'Read a skill',
    description: READ_SKILL_SUMMARY,
    inputSchema: {
      type: 'object',
      properties: {
        name: STRING('the skill name, as list_skills shows it'),
        uri: STRING('the skill:// URI of the SKILL.md (wins over name); needed when several skills share a name'),
      },
    },
    annotations: { title: 'Read a skill', ...READ_ONLY },
    _meta: ALWAYS_LOAD,
  },
  {
    name: 'read_skill_file',
    title: 'Read a skill file',
    description:
      'Returns one file of a skill (a reference, template, script or asset that its SKILL.md points to): by uri, or by ' +
      "skill and path relative to the skill's directory. A directory URI returns its entries.",
    inputSchema: {
      type: 'object',
      properties: {
        uri: STRING('the skill:// URI of the file (wins over skill and path)'),
        skill: STRING('the skill name, or its SKILL.md URI when several skills share a name'),
        path: STRING("the file's path relative to the skill's directory, e.g. references/policy.md"),
        offset: {
          type: 'integer',
          minimum: 0,
          description: 'of a text file, the first character to return (default 0), to read a long file in parts',
        },
        length: {
          type: 'integer',
          minimum: 1,
          description: 'of a text file, most characters to return (default: all)',
        },
      },
    },
    annotations: { title: 'Read a skill file', ...READ_ONLY },
    _meta: ALWAYS_LOAD,
  },
];

/** The four tools' names. */
export const COMPAT_TOOL_NAMES: readonly string[] = Object.freeze(TOOLS.map((tool) => tool.name));

/**
 * The four tools as `tools/list` returns them to one connection.
 *
 * @param readSkill the description of `read_skill` for that connection (its catalog: `readSkillDescription`).
 */
export function compatTools(readSkill: string): Tool[] {
  return TOOLS.map((tool) => (tool.name === 'read_skill' ? { ...tool, description: readSkill } : tool));
}

/** What the tools read through. */
export interface ToolDeps {
  /** The current snapshot, once the first build is done. */
  readonly snapshot: () => Promise<Snapshot>;
  /** The verified read of `resources/read` (size and digest checked; stale files re-indexed first). */
  readonly read: (uri: string) => Promise<SkillReadResult | undefined>;
  /** Entries per `list_skills` page. */
  readonly pageSize: number;
  /** The search index `search_skills` ranks with. */
  readonly search: SkillSearch;
  /** Told about failures that are not the caller's fault (the result only says the file could not be read). */
  readonly onUnexpected: (error: unknown, uri: string) => void;
}

/** A tool result carrying one text block, an error when `isError`. */
function textResult(text: string, isError = false): CallToolResult {
  return isError ? { content: [{ type: 'text', text }], isError: true } : { content: [{ type: 'text', text }] };
}

/**
 * Runs one compat tool.
 *
 * @param name the tool name from `tools/call`.
 * @param args the call's `arguments` (any shape: checked here).
 * @returns the result (`isError: true` for failures the model can act on), or `undefined` when `name` is not a
 *   compat tool.
 */
export async function callCompatTool(name: string, args: unknown, deps: ToolDeps): Promise<CallToolResult | undefined> {
  if (!COMPAT_TOOL_NAMES.includes(name)) return undefined;
  if (name === 'search_skills') return searchSkills(args, deps);
  const params = stringArgs(
    args,
    name === 'list_skills' ? ['cursor'] : name === 'read_skill' ? ['name', 'uri'] : ['uri', 'skill', 'path'],
  );
  if (typeof params === 'string') return textResult(params, true);
  const snapshot = await deps.snapshot();
  if (name === 'list_skills') return listSkills(snapshot, params['cursor'], deps.pageSize);
  if (name === 'read_skill') {
    const found = resolveSkill(snapshot, { ...pick(params, 'name'), ...pick(params, 'uri') });
    if (found.kind === 'error') return textResult(found.message, true);
    const result = await readFile(found.skill.uri, deps);
    if (result.isError === true) return result;
    // The file list first: hosts that cut long results keep the start (and Codex drops the items after a cut one).
    const manifest = result.content[0]?.type === 'text' ? result.content[0].text.length : 0;
    return { content: [{ type: 'text', text: skillFilesText(found.skill, manifest) }, ...result.content] };
  }
  const range = rangeArgs(args);
  if (typeof range === 'string') return textResult(range, true);
  const found = resolveFile(snapshot, { ...pick(params, 'uri'), ...pick(params, 'skill'), ...pick(params, 'path') });
  if (found.kind === 'error') return textResult(found.message, true);
  if (found.kind === 'directory') return textResult(directoryText(found.uri, found.children));
  const result = await readFile(found.file.uri, deps);
  if (range === undefined || result.isError === true || result.content[0]?.type !== 'text' || result.content.length > 1)
    return result;
  const text = result.content[0].text;
  if (range.offset > text.length)
    return textResult(
      `offset ${range.offset} is past the end of ${found.file.uri}, which has ${text.length} characters`,
      true,
    );
  const end = range.length === undefined ? text.length : Math.min(text.length, range.offset + range.length);
  const part = text.slice(range.offset, end);
  return textResult(
    `${found.file.uri}, characters ${range.offset} to ${range.offset + part.length} of ${text.length}:\n${part}`,
  );
}

/**
 * The `offset` and `length` of a `read_skill_file` call.
 *
 * @returns `undefined` when neither is given, the range, or a message for the model when one is not a non-negative
 *   integer (`length` at least 1).
 */
function rangeArgs(args: unknown): { offset: number; length: number | undefined } | undefined | string {
  if (typeof args !== 'object' || args === null) return undefined;
  const { offset, length } = args as Record<string, unknown>;
  if ((offset === undefined || offset === null) && (length === undefined || length === null)) return undefined;
  const valid = (value: unknown, min: number): boolean =>
    value === undefined || value === null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= min);
  if (!valid(offset, 0)) return 'argument "offset" must be an integer of 0 or more (characters)';
  if (!valid(length, 1)) return 'argument "length" must be an integer of 1 or more (characters)';
  return { offset: typeof offset === 'number' ? offset : 0, length: typeof length === 'number' ? length : undefined };
}

function listSkills(snapshot: Snapshot, cursor: string | undefined, pageSize: number): CallToolResult {
  let page;
  try {
    const offered = snapshot.ordered.filter((skill) => skill.modelInvocable);
    page = pageOf(offered, cursor, pageSize, (skill) => skill.uri, RESULT_BUDGET);
  } catch (error) {
    if (error instanceof SkillsServeError)
      return textResult(`${error.message}; call list_skills without a cursor to start over.`, true);
    throw error;
  }
  const skills = page.items.map(listedSkill);
  return skillListResult(page.nextCursor === undefined ? { skills } : { skills, nextCursor: page.nextCursor });
}

/**
 * What a `list_skills` or `search_skills` page may hold: within what the strictest host passes whole (a longer page
 * would reach the model cut), at least one skill.
 */
const RESULT_BUDGET = {
  max: STRICTEST_TOOL_RESULT_CHARS - 200,
  sizeOf: (skill: SkillRecord) => JSON.stringify(listedSkill(skill)).length + 1,
};

/** A skill as `list_skills` and `search_skills` show it: description on one line. */
function listedSkill(skill: SkillRecord): { name: string; description: string; uri: string } {
  return { name: skill.name, description: collapseWhitespace(skill.description), uri: skill.uri };
}

function skillListResult(structured: { skills: unknown[]; nextCursor?: string }): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

async function searchSkills(args: unknown, deps: ToolDeps): Promise<CallToolResult> {
  const parsed = searchArgs(args);
  if (typeof parsed === 'string') return textResult(parsed, true);
  let page;
  try {
    page = deps.search.page(await deps.snapshot(), parsed.query, parsed.limit, parsed.cursor, RESULT_BUDGET);
  } catch (error) {
    if (error instanceof SkillsServeError)
      return textResult(`${error.message}; call search_skills without a cursor to start over.`, true);
    throw error;
  }
  const skills = page.skills.map(listedSkill);
  return skillListResult(page.nextCursor === undefined ? { skills } : { skills, nextCursor: page.nextCursor });
}

/**
 * The arguments of `search_skills`.
 *
 * @returns `query`, `limit` (default {@link DEFAULT_SEARCH_LIMIT}) and `cursor` when given, or a message for the
 *   model when `query` is missing, not a string, longer than {@link MAX_QUERY_CHARS} or holds no searchable word,
 *   `limit` is not an integer from 1 to {@link MAX_SEARCH_LIMIT}, or `cursor` is not a string.
 */
export function searchArgs(args: unknown): { query: string; limit: number; cursor?: string } | string {
  const strings = stringArgs(args, ['query', 'cursor']);
  if (typeof strings === 'string') return strings;
  const query = strings['query'];
  if (query === undefined) return 'argument "query" is required: a few words describing the task';
  if (query.length > MAX_QUERY_CHARS)
    return `query is ${query.length} characters long; give a few words describing the task (at most ${MAX_QUERY_CHARS} characters)`;
  if (!SkillSearch.searchable(query))
    return `query ${JSON.stringify(query.slice(0, 200))} has no word to search for; give a few words describing the task`;
  const limit = (args as Record<string, unknown>)['limit'] ?? DEFAULT_SEARCH_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    return `argument "limit" must be an integer from 1 to ${MAX_SEARCH_LIMIT}`;
  }
  const cursor = strings['cursor'];
  return cursor === undefined ? { query, limit } : { query, limit, cursor };
}

/** Reads `uri` through the verified path and turns the outcome into tool content. */
async function readFile(uri: string, deps: ToolDeps): Promise<CallToolResult> {
  let read: SkillReadResult | undefined;
  try {
    read = await deps.read(uri);
  } catch (error) {
    const message = toToolError(error);
    if (message !== undefined) return textResult(message, true);
    deps.onUnexpected(error, uri);
    return textResult(`${uri} could not be read`, true);
  }
  if (read === undefined)
    return textResult(`${uri} is no longer served. Call list_skills to see the available skills.`, true);
  if ('text' in read) return { content: [{ type: 'text', text: read.text }] };
  return { content: binaryContent(uri, read.bytes, read.mimeType ?? 'application/octet-stream') };
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** A binary file as tool content: an image block for common image types, else an embedded resource with a blob. */
export function binaryContent(uri: string, bytes: Uint8Array, mimeType: string): ContentBlock[] {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  if (IMAGE_TYPES.has(mimeType)) {
    return [
      { type: 'text', text: `${uri} is an image (${mimeType}, ${bytes.byteLength} bytes).` },
      { type: 'image', data, mimeType },
    ];
  }
  return [
    {
      type: 'text',
      text: `${uri} is a binary file (${mimeType}, ${bytes.byteLength} bytes); its bytes follow as a base64 blob.`,
    },
    { type: 'resource', resource: { uri, mimeType, blob: data } },
  ];
}

/**
 * The string arguments `keys` of a call; other keys are ignored.
 *
 * @returns the present ones, or a message when `args` is not an object or one of `keys` is not a string.
 */
export function stringArgs(args: unknown, keys: readonly string[]): Record<string, string> | string {
  if (args === undefined || args === null) return {};
  if (typeof args !== 'object' || Array.isArray(args)) return 'arguments must be an object';
  const result: Record<string, string> = {};
  for (const key of keys) {
    const value = (args as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return `argument "${key}" must be a string`;
    result[key] = value;
  }
  return result;
}

function pick(params: Record<string, string>, key: string): Record<string, string> {
  const value = params[key];
  return value === undefined ? {} : { [key]: value };
}
