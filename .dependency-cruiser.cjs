// The layer rules of docs/ARCHITECTURE.md ("Layers"), checked by `npm run lint` (depcruise src). Type-only imports
// count (`tsPreCompilationDeps`): a circle through types is still a circle in the design, and becomes a value circle
// the day someone imports a constant along the same path.
/** A rule forbidding imports from the `from` layer into any of the `to` paths. */
const layer = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import circles are seams to cut: move the shared vocabulary into the lower module (wire/, config.ts).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    layer(
      'nothing-imports-cli',
      'cli/ is the top: it reads argv and the environment, and exits.',
      '^src/(?!cli/)',
      '^src/cli/',
    ),
    layer(
      'index-is-a-leaf',
      'index/ turns directories into snapshots: it knows no server, transport, watcher, root source, logger or CLI.',
      '^src/index/',
      '^src/(?!index/|errors\\.ts$|paths\\.ts$)',
    ),
    layer(
      'hosts-is-a-leaf',
      'hosts/ is what each host does with an offer, measured: pure data that server/ and commands/ both read.',
      '^src/hosts/',
      '^src/(?!hosts/)',
    ),
    layer(
      'feed-over-index',
      'feed/ is the discovery feed of a set of skills (index, deterministic archives): commands/ export it, transports/ serve it.',
      '^src/feed/',
      '^src/(?!feed/|index/)',
    ),
    layer(
      'wire-is-a-leaf',
      'wire/ is the protocol vocabulary server/ and transports/ share.',
      '^src/wire/',
      '^src/(?!wire/)',
    ),
    layer(
      'watch-over-index',
      'watch/ turns file events into region rebuilds of the index.',
      '^src/watch/',
      '^src/(?!watch/|index/|log\\.ts$)',
    ),
    layer(
      'roots-over-index',
      'roots/ turns root arguments into directories; config.ts types them, so roots/ must not import config.ts.',
      '^src/roots/',
      '^src/(?!roots/|index/types\\.ts$|errors\\.ts$|paths\\.ts$|loopback\\.ts$)',
    ),
    layer(
      'kinds-apart',
      'A kind of root is a folder of its own (roots/git/, roots/folder/) over roots/kind.ts: it imports no other kind.',
      '^src/roots/([^/]+)/',
      '^src/roots/(?!$1/)[^/]+/',
    ),
    layer(
      'kinds-behind-registry',
      'Above roots/, kinds are spoken of through roots/kinds.ts (RootKind); only the command line knows their flags.',
      '^src/(?!cli/|roots/)',
      '^src/roots/[^/]+/',
    ),
    layer(
      'index-setup-below-runtime',
      'open-index.ts sets the index up for the runtime and the commands: roots/, index/ and the logger type only.',
      '^src/open-index\\.ts$',
      '^src/(?!roots/|index/|log\\.ts$)',
    ),
    layer(
      'server-below-runtime',
      'server/ builds per-connection servers over interfaces the runtime satisfies; it never imports what is above.',
      '^src/server/',
      '^src/(runtime\\.ts$|transports/|commands/|roots/|watch/)',
    ),
    layer(
      'transports-below-cli',
      'transports/ adapt the runtime to a wire; they do not run one-shot commands or watch.',
      '^src/transports/',
      '^src/(commands/|watch/)',
    ),
    layer(
      'runtime-below-transports',
      'The runtime is what transports serve: it never imports one, nor the one-shot commands.',
      '^src/runtime\\.ts$',
      '^src/(transports/|commands/)',
    ),
    layer(
      'commands-over-index',
      'The one-shot commands build one index and print it: no server, transport, watcher or runtime.',
      '^src/commands/',
      '^src/(server/|transports/|watch/|runtime\\.ts$)',
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|dist)/' },
  },
};
