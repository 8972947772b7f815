# syntax=docker/dockerfile:1
# govops: GitOps reconciler for the data-governance service. `docker build -t govops .`
# Runtime: `docker run govops run --repo https://... --path manifests/` (see docs/deploy.md).
# Node 26: the Active LTS line since 2026-10-28 (its official images are Debian 13 "trixie" only).
# Size: the runtime file system is assembled in the `rootfs` stage and copied into an empty image, so that
# nothing the runtime does not need (npm, apt caches, manuals, perl, the node binary's debug symbols) is
# carried in a lower layer; sizes per part in bench/RESULTS.md, reasons in docs/decisions.md ("Container image").
ARG NODE_VERSION=26

# ---- build: compile TypeScript with the dev dependencies ---------------------------------------
FROM node:${NODE_VERSION}-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY schemas ./schemas
COPY scripts ./scripts
# the build runs the built command on the examples against a sandbox of its own, recording the compiled code the
# command then runs from (scripts/build-code-cache.mjs; docs/decisions.md "The command line runs from compiled code")
COPY examples ./examples
RUN npm run build

# ---- app: /app as it runs: production dependencies only, without what only their developers read --
FROM node:${NODE_VERSION}-trixie-slim AS app
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` would build (needs dev dependencies): the build stage already did it. Then drop tests, docs,
# examples, type declarations, TypeScript sources and source maps of the dependencies, and check that
# every dependency still loads.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && find node_modules -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name benchmarks -o -name bench \
      -o -name example -o -name examples -o -name docs -o -name .github \) -exec rm -rf {} + \
 && find node_modules -type f \( -name '*.md' -o -name '*.markdown' -o -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \
      -o -name '*.yml' -o -name '*.png' -o -name '*.zip' -o -name '.*' \) -delete \
 && node --input-type=module -e "import { readFileSync } from 'node:fs'; \
      for (const d of Object.keys(JSON.parse(readFileSync('package.json', 'utf8')).dependencies)) await import(d);" \
 && rm package-lock.json
COPY --from=build /app/dist ./dist
COPY schemas ./schemas
COPY examples ./examples
RUN chmod 0755 dist/cli/govops.cjs

# ---- rootfs: the runtime's operating system: node, git, openssh-client, CA certificates, tini --------
FROM node:${NODE_VERSION}-trixie-slim AS rootfs
# dpkg leaves out documentation, manuals and translations (copyright notices stay). binutils only strips
# the node binary's debug symbols (about 33 MB; the dynamic symbol table native addons link against stays)
# and is removed again. perl is a dependency of Debian's git package for git's perl scripts (send-email,
# svn, cvsimport...), none of which govops runs; it is removed with dpkg (about 50 MB).
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' 'path-exclude=/usr/share/man/*' \
      'path-exclude=/usr/share/info/*' 'path-exclude=/usr/share/locale/*' 'path-include=/usr/share/locale/locale.alias' \
      >/etc/dpkg/dpkg.cfg.d/govops-slim \
 && apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini openssh-client binutils \
 && strip --strip-all /usr/local/bin/node \
 && apt-get purge -y --auto-remove binutils \
 && dpkg --purge --force-depends $(dpkg-query -W -f '${binary:Package}\n' perl 'libperl5.*' 'perl-modules-5.*' liberror-perl 2>/dev/null) \
 && rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/include \
      /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg /root/.npm /root/.cache \
      /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /var/lib/dpkg/*-old /var/log/* /tmp/* \
      /usr/share/man/* /usr/share/info/* \
 && find /usr/share/doc -mindepth 1 ! -type d ! -name copyright -delete \
 && find /usr/share/doc -mindepth 1 -depth -type d -empty -delete \
 && find /usr/share/locale -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} + \
 && node --version && git --version && ssh -V && tini --version \
 && groupadd --gid 10001 govops \
 && useradd --uid 10001 --gid govops --home-dir /home/govops --create-home --shell /usr/sbin/nologin govops \
 && ln -s /app/dist/cli/govops.cjs /usr/local/bin/govops \
 && mkdir -p /data && chown govops:govops /data

# ---- runtime: an empty image plus the two parts above (the OS, then /app: a code change moves 15 MB) --
FROM scratch AS runtime
COPY --from=rootfs / /
COPY --from=app /app /app
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_ENV=production
# State (.govops/state.json) and the Git cache live in /data: mount a volume there.
WORKDIR /data
USER 10001:10001
ENV GOVOPS_LISTEN=:8080
EXPOSE 8080
# `govops healthcheck` finds the running `govops run` and checks /healthz at the address it was started
# with (its --listen flag or GOVOPS_LISTEN): the container's arguments are not visible here otherwise.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["govops", "healthcheck"]
ENTRYPOINT ["tini", "--", "govops"]
CMD ["run"]
