/**
 * MIME types of skill files, from the file extension (DESIGN §5 "Text or blob").
 * `mime-types` knows the registered types; skills also hold source code it misnames (`.ts` is not MPEG-TS here)
 * or does not know (`.py`), so those are looked up first.
 */
import mimeTypes from 'mime-types';

const SOURCE_CODE: Readonly<Record<string, string>> = {
  py: 'text/x-python',
  ts: 'text/typescript',
  mts: 'text/typescript',
  cts: 'text/typescript',
  tsx: 'text/tsx',
  rb: 'text/x-ruby',
  go: 'text/x-go',
  rs: 'text/x-rust',
  ps1: 'text/plain',
  lua: 'text/x-lua',
  yaml: 'application/yaml',
  yml: 'application/yaml',
};

/** Fallback for files without a known extension. */
export const DEFAULT_MIME_TYPE = 'application/octet-stream';

/**
 * MIME type for a file name.
 *
 * @param name the file name (last path segment).
 * @returns e.g. `text/markdown` for `SKILL.md`, `application/octet-stream` when unknown.
 */
export function mimeTypeFor(name: string): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return DEFAULT_MIME_TYPE;
  const extension = name.slice(dot + 1).toLowerCase();
  if (Object.hasOwn(SOURCE_CODE, extension)) return SOURCE_CODE[extension] as string;
  return mimeTypes.lookup(extension) || DEFAULT_MIME_TYPE;
}
