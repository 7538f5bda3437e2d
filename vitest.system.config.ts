import { defineConfig } from 'vitest/config';

// Tests that change machine-wide settings (the inotify watch limit); CI runs them alone: npm run test:system.
export default defineConfig({
  test: {
    include: ['test/system/**/*.test.ts'],
    testTimeout: 60_000,
    fileParallelism: false,
  },
});
