# skills-serve as a container: an MCP stdio server, so hosts must run it with `docker run -i` (stdin open, no -t).
#
#   docker build -t skills-serve .
#   docker run -i --rm -v /abs/path/to/skills:/skills:ro skills-serve
#   docker run -i --rm -v /abs/path/to/skills:/skills:ro skills-serve --poll /skills   # Docker Desktop bind mounts
#
# Base image: the official node:22-bookworm-slim. Node 22 is a maintained LTS line (until April 2027) inside
# package.json `engines` (>= 20.19), and the Node the project's conformance tools already run on; Node 20 reached
# end of life on 2026-04-30. The major is pinned so a rebuild picks up patch releases but never a new major;
# slim (Debian 12, no compilers) is enough because the bundle has no native dependencies.

# --- build: install the pinned dev toolchain and bundle src/ into dist/ (entry and chunks) ---------------------------
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json LICENSE ./
COPY scripts/ scripts/
COPY src/ src/
COPY bin/ bin/
RUN npm run build && rm dist/*.map

# --- runtime: the bundle needs no node_modules; only git (for git roots) is installed ----------------------------
FROM node:22-bookworm-slim
LABEL org.opencontainers.image.title="skills-serve" \
      org.opencontainers.image.description="MCP stdio server for folders of Agent Skills; mount them read-only at /skills and run with docker run -i" \
      org.opencontainers.image.licenses="MIT"
WORKDIR /app
# Owned by root and not writable by the `node` user that runs the server.
COPY --from=build /app/package.json /app/LICENSE ./
COPY --from=build /app/bin/ bin/
COPY --from=build /app/dist/ dist/
# Git roots (git+https://…, github:owner/repo) are fetched with the system git (docs/git-roots.md says why);
# ca-certificates lets it verify https remotes; openssh-client's ssh-keygen verifies signed commits
# (--git-allowed-signers). Debian's packages, without recommends, lists removed.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates openssh-client \
 && rm -rf /var/lib/apt/lists/*
USER node
# The skills folder is mounted at /skills (`-v /abs/path/to/skills:/skills:ro`). There is deliberately no VOLUME:
# a forgotten -v then fails at once ("skills root /skills cannot be used (it does not exist)", exit 1) instead of
# silently serving an empty anonymous volume.
# Exec form, no shell: Node is PID 1 and receives SIGTERM itself (src/runtime.ts handles it and exits 0).
ENTRYPOINT ["node", "/app/bin/skills-serve.js"]
CMD ["/skills"]
