# syntax=docker/dockerfile:1
# govops: GitOps reconciler for the data-governance service. `docker build -t govops .`
# Runtime: `docker run govops run --repo https://... --path manifests/` (see docs/deploy.md).
# Node 26: the Active LTS line since 2026-10-28 (its official images are Debian 13 "trixie" only).
ARG NODE_VERSION=26

# ---- build: compile TypeScript with the dev dependencies ---------------------------------------
FROM node:${NODE_VERSION}-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY schemas ./schemas
RUN npm run build

# ---- runtime: production dependencies only, git, non-root --------------------------------------
FROM node:${NODE_VERSION}-trixie-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini openssh-client \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 govops \
 && useradd --uid 10001 --gid govops --home-dir /home/govops --create-home --shell /usr/sbin/nologin govops
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# `prepare` would build (needs dev dependencies): the build stage already did it.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY schemas ./schemas
COPY examples ./examples
RUN chmod 0755 /app/dist/cli/main.js && ln -s /app/dist/cli/main.js /usr/local/bin/govops \
 && mkdir -p /data && chown govops:govops /data
# State (.govops/state.json) and the Git cache live in /data: mount a volume there.
WORKDIR /data
USER 10001:10001
ENV GOVOPS_LISTEN=:8080
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const a=process.env.GOVOPS_LISTEN||':8080';fetch('http://127.0.0.1:'+a.slice(a.lastIndexOf(':')+1)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["tini", "--", "govops"]
CMD ["run"]
