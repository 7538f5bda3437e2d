/**
 * What every git run is given (pure parts of src/sources/git-exec.ts and git-token.ts): the safety configuration on
 * the command line, an environment without variables that redirect git or print secrets, and a token that travels
 * in the environment only, scoped to the remote's origin, and never over plain http off the machine.
 */
import { describe, expect, it } from 'vitest';

import { gitArguments, gitEnvironment, SAFETY_CONFIG } from '../../src/roots/git/exec.js';
import { tokenAuth } from '../../src/roots/git/token.js';
import { parseGitUrl } from '../../src/roots/git/url.js';

describe('gitArguments', () => {
  it('puts the safety configuration first, then only the one protocol asked for', () => {
    const args = gitArguments(['fetch', 'x'], 'https');
    expect(args.slice(-2)).toEqual(['fetch', 'x']);
    const config = args.slice(0, -2);
    expect(config.filter((_, index) => index % 2 === 0).every((flag) => flag === '-c')).toBe(true);
    const pairs = config.filter((_, index) => index % 2 === 1);
    expect(pairs).toEqual([...SAFETY_CONFIG.map(([key, value]) => `${key}=${value}`), 'protocol.https.allow=always']);
    expect(pairs).toContain('core.hooksPath=/dev/null');
    expect(pairs).toContain('protocol.allow=never');
    expect(pairs).toContain('protocol.ext.allow=never');
    expect(pairs).toContain('http.followRedirects=false');
    expect(pairs.filter((pair) => pair.endsWith('.allow=always'))).toEqual(['protocol.https.allow=always']);
    expect(
      gitArguments(['cat-file', '--batch']).filter(
        (arg) => arg.startsWith('protocol.') && arg.endsWith('.allow=always'),
      ),
    ).toEqual([]);
  });
});

describe('gitEnvironment', () => {
  it('keeps the user setup, drops variables that redirect git or trace secrets, and never prompts', () => {
    const env = gitEnvironment({
      env: {
        PATH: '/usr/bin',
        HOME: '/home/u',
        SSH_AUTH_SOCK: '/tmp/agent',
        GIT_SSH_COMMAND: 'ssh -i key',
        GIT_CONFIG_GLOBAL: '/home/u/.gitconfig',
        GIT_DIR: '/elsewhere',
        GIT_WORK_TREE: '/elsewhere',
        GIT_TRACE: '1',
        GIT_TRACE_CURL: '1',
        GIT_CURL_VERBOSE: '1',
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'core.hooksPath',
        GIT_CONFIG_VALUE_0: '/tmp/hooks',
        GIT_CONFIG_PARAMETERS: "'core.hooksPath'='/tmp/hooks'",
        GIT_TERMINAL_PROMPT: '1',
        UNSET: undefined,
      },
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/u',
      SSH_AUTH_SOCK: '/tmp/agent',
      GIT_SSH_COMMAND: 'ssh -i key',
      GIT_CONFIG_GLOBAL: '/home/u/.gitconfig',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ALLOW_PROTOCOL: 'none',
    });
    expect(gitEnvironment({ env: { GIT_ALLOW_PROTOCOL: 'ext:file' }, protocol: 'https' })).toEqual({
      GIT_TERMINAL_PROMPT: '0',
      GIT_ALLOW_PROTOCOL: 'https',
    });
  });

  it('passes secret configuration as GIT_CONFIG_COUNT variables', () => {
    expect(
      gitEnvironment({ env: {}, secretConfig: [['http.https://h/.extraHeader', 'Authorization: Basic eA==']] }),
    ).toEqual({
      GIT_TERMINAL_PROMPT: '0',
      GIT_ALLOW_PROTOCOL: 'none',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.https://h/.extraHeader',
      GIT_CONFIG_VALUE_0: 'Authorization: Basic eA==',
    });
  });
});

describe('tokenAuth', () => {
  const header = `Authorization: Basic ${Buffer.from('x-access-token:tok').toString('base64')}`;
  it.each([
    ['https://github.com/acme/skills.git', [['http.https://github.com/.extraHeader', header]]],
    ['https://git.example:8443/acme/skills.git', [['http.https://git.example:8443/.extraHeader', header]]],
    ['http://127.0.0.1:8080/skills.git', [['http.http://127.0.0.1:8080/.extraHeader', header]]],
    ['http://localhost/skills.git', [['http.http://localhost/.extraHeader', header]]],
    ['ssh://git@github.com/acme/skills.git', []],
    ['file:///srv/skills.git', []],
  ])('%s → %j', (url, config) => {
    const auth = tokenAuth(parseGitUrl(url), 'tok');
    expect(auth.secretConfig).toEqual(config);
    expect(auth.secrets).toEqual(['tok', 'x-access-token:tok']);
    expect(auth.warning).toBeUndefined();
  });

  it('withholds a token from plain http off the machine, with a warning that does not contain it', () => {
    const auth = tokenAuth(parseGitUrl('http://git.example/acme/skills.git'), 'tok-secret');
    expect(auth.secretConfig).toEqual([]);
    expect(auth.warning).toBe(
      'SKILLS_SERVE_GIT_TOKEN is not sent to http://git.example/acme/skills.git: plain http would expose it (use https)',
    );
  });

  it('is nothing without a token', () => {
    expect(tokenAuth(parseGitUrl('https://h/x.git'), undefined)).toEqual({ secretConfig: [], secrets: [] });
    expect(tokenAuth(parseGitUrl('https://h/x.git'), '')).toEqual({ secretConfig: [], secrets: [] });
  });
});
