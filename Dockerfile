# syntax=docker/dockerfile:1
#
# Model Gateway container image (docs/operations.md).
#   docker build -t model-gateway .
#   docker run -p 8080:8080 -v gateway-data:/data model-gateway
#
# Stage 1 builds with the dev dependencies (TypeScript) and compiles better-sqlite3, a native addon, from source
# (.npmrc: build-from-source=true) against the image's own Node headers; it then prunes the dev dependencies, so the
# runtime stage receives production dependencies only, with the addon built for the same base image.
# `npm run deploy:check` replays these steps in a clean directory (scripts/deploy-check.mjs): keep the two in step.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# node-gyp's toolchain for better-sqlite3; the headers come with the Node image (no download).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: the package's own `prepare` (a build) needs the sources, copied below; the dependencies'
# install scripts (better-sqlite3's compile among them) run in `npm rebuild`.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && node -e "require('better-sqlite3')(':memory:').prepare('select 1').get()"

FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="model-gateway" \
      org.opencontainers.image.description="Self-hosted HTTP gateway in front of AI model providers" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    GATEWAY_DATABASE_URL=sqlite:/data/gateway.db
WORKDIR /app
# The image's unprivileged `node` user (uid 1000) owns nothing but the data directory.
RUN mkdir -p /data /etc/model-gateway && chown node:node /data
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
USER node
# SQLite's file when GATEWAY_DATABASE_URL stays sqlite:; unused with PostgreSQL.
VOLUME ["/data"]
EXPOSE 8080
# A config file is mounted at /etc/model-gateway/gateway.yaml and named by GATEWAY_CONFIG (not set by default).
# Liveness: /health. Readiness (store reachable, not shutting down) is /ready, for load balancers and Kubernetes.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node is PID 1 and handles SIGTERM itself: it stops accepting, finishes in-flight requests for up to
# GATEWAY_SHUTDOWN_GRACE_MS (30 s; give the container longer, e.g. `docker stop -t 40`), writes pending usage and exits.
STOPSIGNAL SIGTERM
# A 64 MB young generation: with a thousand requests in flight their short-lived objects still die young instead
# of being promoted and collected by the (costlier) old-generation GC (docs/operations.md#sizing).
ENTRYPOINT ["node", "--max-semi-space-size=64", "dist/bin.js"]
CMD ["serve"]
