import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/system changes machine-wide settings; CI runs it alone (npm run test:system). test/hosts runs real hosts
    // (npm run test:hosts); test/container the Docker image (npm run test:container).
    exclude: ['test/system/**', 'test/hosts/**', 'test/container/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/global-cache.ts'],
  },
});
