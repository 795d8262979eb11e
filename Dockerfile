# media-gateway: one image for every role (serve --role all|api|worker).
# Build: docker build -t media-gateway .
# Run:   docker run -p 3000:3000 -v mg-data:/data -e ADMIN_KEY=... media-gateway

# 1. Compile the TypeScript sources and bundle the console's pages into dist/console (needs the dev
#    dependencies); the simulator and the demo are dropped from the output, the production image
#    has no use for them.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build-if-stale.mjs scripts/build-console.mjs ./scripts/
COPY src ./src
RUN npm run build && rm -rf dist/simulator dist/app/demo.js dist/app/demo.d.ts

# 2. Production dependencies only. better-sqlite3 (the SQLite driver on Node 20 and 22) fetches a
#    prebuilt binary, or compiles with the toolchain when none fits; on Node 24 the store uses
#    the built-in node:sqlite instead (see docs/operations.md).
FROM node:24-slim AS deps
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm rebuild better-sqlite3 \
  && npm cache clean --force

# 3. The runtime: compiled JavaScript run by plain node, as a non-root user.
FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# The data directory holds the SQLite file (when no DATABASE_URL is set) and generated images.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 (no npm, no shell in between): it receives SIGTERM directly, and the
# gateway fails /readyz for SHUTDOWN_DELAY_MS while still serving, then stops taking requests,
# lets in-flight ones finish within SHUTDOWN_GRACE_MS, closes its store and exits 0. It starts
# no child processes, so it needs no init to reap them.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js", "serve"]
