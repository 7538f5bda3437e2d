import { describe, expect, it } from 'vitest';

import { DEFAULT_MIME_TYPE, mimeTypeFor } from '../../src/index/mime.js';

describe('mimeTypeFor', () => {
  it('falls back to application/octet-stream', () => {
    expect(DEFAULT_MIME_TYPE).toBe('application/octet-stream');
  });

  it.each([
    ['SKILL.md', 'text/markdown'],
    ['README.MD', 'text/markdown'],
    ['notes.markdown', 'text/markdown'],
    ['script.py', 'text/x-python'],
    ['index.ts', 'text/typescript'],
    ['index.mts', 'text/typescript'],
    ['index.cts', 'text/typescript'],
    ['App.tsx', 'text/tsx'],
    ['Tool.TS', 'text/typescript'],
    ['data.json', 'application/json'],
    ['logo.png', 'image/png'],
    ['LOGO.PNG', 'image/png'],
    ['form.pdf', 'application/pdf'],
    ['config.yaml', 'application/yaml'],
    ['config.yml', 'application/yaml'],
    ['notes.txt', 'text/plain'],
    ['run.sh', 'application/x-sh'],
    ['tool.js', 'text/javascript'],
    ['page.html', 'text/html'],
    ['icon.svg', 'image/svg+xml'],
    ['photo.jpg', 'image/jpeg'],
    ['font.woff2', 'font/woff2'],
    ['data.csv', 'text/csv'],
    ['archive.tar.gz', 'application/gzip'],
    ['main.go', 'text/x-go'],
    ['lib.rs', 'text/x-rust'],
    ['x.rb', 'text/x-ruby'],
    ['x.lua', 'text/x-lua'],
    ['setup.ps1', 'text/plain'],
    ['Makefile', 'application/octet-stream'],
    ['LICENSE', 'application/octet-stream'],
    ['.md', 'application/octet-stream'],
    ['.PNG', 'application/octet-stream'],
    ['.gitignore', 'application/octet-stream'],
    ['trailing.', 'application/octet-stream'],
    ['..', 'application/octet-stream'],
    ['a.unknownext', 'application/octet-stream'],
    ['a.md.bak', 'application/octet-stream'],
    ['café.md', 'text/markdown'],
    ['a b.json', 'application/json'],
    ['', 'application/octet-stream'],
  ])('mimeTypeFor(%j) === %j', (name, expected) => {
    expect(mimeTypeFor(name)).toBe(expected);
  });

  // Regression: a plain object lookup used to find Object.prototype members for these extensions.
  it.each([['x.constructor'], ['notes.__proto__'], ['A.CONSTRUCTOR']])(
    'an extension named like an Object.prototype key is unknown: %j',
    (name) => {
      expect(mimeTypeFor(name)).toBe('application/octet-stream');
    },
  );
});
