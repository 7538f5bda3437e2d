/**
 * The read-only tools offered to hosts without the Skills extension (`--compat`): `list_skills`, `read_skill` and
 * `read_skill_file`. Definitions and call handling only; which clients see them is decided in `compat.ts`.
 * Every failure a model can act on (unknown skill, ambiguous name, bad cursor, unreadable file) is a tool result with
 * `isError: true` (MCP "Tools" › "Error handling"); an unknown tool name is left to the caller (-32602).
 */
import { type CallToolResult, type ContentBlock, type Tool } from '@modelcontextprotocol/server';
import type { SkillReadResult } from '@modelcontextprotocol/server/ext/skills';
import { SkillsServeError, toToolError } from '../errors.js';
import { pageOf } from '../index/snapshot.js';
import type { Snapshot } from '../index/types.js';
import { directoryText, resolveFile, resolveSkill, skillFilesText } from './compat-catalog.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const STRING = (description: string) => ({ type: 'string', description }) as const;

const TOOLS: Tool[] = [
  {
    name: 'list_skills',
    title: 'List skills',
    description:
      'Lists the Agent Skills this server provides: name, description and the skill:// URI of each SKILL.md, in pages. ' +
      "Read a skill's SKILL.md with read_skill before doing a task its description matches.",
    inputSchema: { type: 'object', properties: { cursor: STRING('nextCursor of the previous page, to get the next one') } },
    outputSchema: {
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
    },
    annotations: { title: 'List skills', ...READ_ONLY },
  },
  {
    name: 'read_skill',
    title: 'Read a skill',
    description:
      "Returns a skill's SKILL.md (its instructions) and the list of its other files. Name the skill by name, or by uri " +
      'when several skills share a name.',
    inputSchema: {
      type: 'object',
      properties: {
        name: STRING('the skill name, as list_skills shows it'),
        uri: STRING('the skill:// URI of the SKILL.md (wins over name); needed when several skills share a name'),
      },
    },
    annotations: { title: 'Read a skill', ...READ_ONLY },
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
      },
    },
    annotations: { title: 'Read a skill file', ...READ_ONLY },
  },
];

/** The three tools, as `tools/list` returns them. */
export const COMPAT_TOOLS: readonly Tool[] = Object.freeze(TOOLS);

/** What the tools read through. */
export interface ToolDeps {
  /** The current snapshot, once the first build is done. */
  readonly snapshot: () => Promise<Snapshot>;
  /** The verified read of `resources/read` (size and digest checked; stale files re-indexed first). */
  readonly read: (uri: string) => Promise<SkillReadResult | undefined>;
  /** Entries per `list_skills` page. */
  readonly pageSize: number;
  /** Told about failures that are not the caller's fault (the result only says the file could not be read). */
  readonly onUnexpected: (error: unknown, uri: string) => void;
}

/** A tool result carrying one text block, an error when `isError`. */
export function textResult(text: string, isError = false): CallToolResult {
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
  if (!COMPAT_TOOLS.some((tool) => tool.name === name)) return undefined;
  const params = stringArgs(args, name === 'list_skills' ? ['cursor'] : name === 'read_skill' ? ['name', 'uri'] : ['uri', 'skill', 'path']);
  if (typeof params === 'string') return textResult(params, true);
  const snapshot = await deps.snapshot();
  if (name === 'list_skills') return listSkills(snapshot, params['cursor'], deps.pageSize);
  if (name === 'read_skill') {
    const found = resolveSkill(snapshot, { ...pick(params, 'name'), ...pick(params, 'uri') });
    if (found.kind === 'error') return textResult(found.message, true);
    const result = await readFile(found.skill.uri, deps);
    return result.isError === true ? result : { content: [...result.content, { type: 'text', text: skillFilesText(found.skill) }] };
  }
  const found = resolveFile(snapshot, { ...pick(params, 'uri'), ...pick(params, 'skill'), ...pick(params, 'path') });
  if (found.kind === 'error') return textResult(found.message, true);
  if (found.kind === 'directory') return textResult(directoryText(found.uri, found.children));
  return readFile(found.file.uri, deps);
}

function listSkills(snapshot: Snapshot, cursor: string | undefined, pageSize: number): CallToolResult {
  let page;
  try {
    page = pageOf(snapshot.ordered, cursor, pageSize, (skill) => skill.uri);
  } catch (error) {
    if (error instanceof SkillsServeError) return textResult(`${error.message}; call list_skills without a cursor to start over.`, true);
    throw error;
  }
  const skills = page.items.map((skill) => ({ name: skill.name, description: skill.description, uri: skill.uri }));
  const structured = page.nextCursor === undefined ? { skills } : { skills, nextCursor: page.nextCursor };
  return { content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }], structuredContent: structured };
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
  if (read === undefined) return textResult(`${uri} is no longer served. Call list_skills to see the available skills.`, true);
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
    { type: 'text', text: `${uri} is a binary file (${mimeType}, ${bytes.byteLength} bytes); its bytes follow as a base64 blob.` },
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
