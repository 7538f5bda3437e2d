/**
 * MIME types of skill files, from the file extension (docs/ARCHITECTURE.md, "Text or blob"). A table of what skills
 * hold (text, source code, documents, images, fonts, archives, media) instead of the whole IANA database: the type
 * is a hint to hosts (whether bytes go out as text or a blob depends on the bytes, not on this), and the full
 * database cost 230 KB of bundle parsed at every start. Source code gets text types (`.ts` is not MPEG-TS here).
 */

const TYPES: Readonly<Record<string, string>> = {
  // text and data
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  ini: 'text/plain',
  cfg: 'text/plain',
  conf: 'text/plain',
  rst: 'text/x-rst',
  adoc: 'text/asciidoc',
  tex: 'application/x-tex',
  bib: 'text/x-bibtex',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  jsonl: 'application/jsonl',
  ndjson: 'application/x-ndjson',
  map: 'application/json',
  ipynb: 'application/x-ipynb+json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  xml: 'application/xml',
  xsd: 'application/xml',
  xsl: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  svg: 'image/svg+xml',
  ics: 'text/calendar',
  diff: 'text/x-diff',
  patch: 'text/x-diff',
  sql: 'application/sql',
  graphql: 'application/graphql',
  // source code and scripts
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  jsx: 'text/jsx',
  ts: 'text/typescript',
  mts: 'text/typescript',
  cts: 'text/typescript',
  tsx: 'text/tsx',
  py: 'text/x-python',
  rb: 'text/x-ruby',
  go: 'text/x-go',
  rs: 'text/x-rust',
  java: 'text/x-java-source',
  kt: 'text/x-kotlin',
  swift: 'text/x-swift',
  c: 'text/x-c',
  h: 'text/x-c',
  cc: 'text/x-c',
  cpp: 'text/x-c',
  hpp: 'text/x-c',
  cs: 'text/x-csharp',
  php: 'application/x-httpd-php',
  pl: 'application/x-perl',
  lua: 'text/x-lua',
  r: 'text/x-r',
  sh: 'application/x-sh',
  bash: 'application/x-sh',
  zsh: 'application/x-sh',
  ps1: 'text/plain',
  bat: 'text/plain',
  cmd: 'text/plain',
  // documents
  pdf: 'application/pdf',
  rtf: 'application/rtf',
  epub: 'application/epub+zip',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  // images
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  ico: 'image/vnd.microsoft.icon',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  avif: 'image/avif',
  heic: 'image/heic',
  // fonts
  ttf: 'font/ttf',
  otf: 'font/otf',
  woff: 'font/woff',
  woff2: 'font/woff2',
  // archives and binaries
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
  bz2: 'application/x-bzip2',
  xz: 'application/x-xz',
  '7z': 'application/x-7z-compressed',
  jar: 'application/java-archive',
  wasm: 'application/wasm',
  // media and models
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  gltf: 'model/gltf+json',
  glb: 'model/gltf-binary',
  obj: 'model/obj',
  stl: 'model/stl',
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
  return Object.hasOwn(TYPES, extension) ? (TYPES[extension] as string) : DEFAULT_MIME_TYPE;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of `bytes` when they are well-formed UTF-8 (a byte-order mark is kept as U+FEFF, so the text encodes back
 * to exactly these bytes); `undefined` otherwise: such a file is served as a base64 blob (SEP-2640 "resources/read").
 */
export function decodeLossless(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
