import { defineConfig } from 'vitest/config';

// Real hosts (Claude Code, Gemini CLI, Codex CLI, opencode) run offline against the server: npm run test:hosts
// (installs them first).
export default defineConfig({
  test: {
    include: ['test/hosts/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One host at a time: each starts a heavy terminal UI and servers of its own on a 2-core machine, and terminal
    // timing is what these tests read.
    fileParallelism: false,
  },
});
