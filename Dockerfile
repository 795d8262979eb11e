# media-gateway: one image for every role (serve --role all|api|worker).
# Build: docker build -t media-gateway .
# Run:   docker run -p 3000:3000 -v mg-data:/data -e ADMIN_KEY=... media-gateway

FROM node:20-bookworm-slim AS deps
WORKDIR /app
# better-sqlite3 normally downloads a prebuilt binary; the toolchain is the fallback when none fits.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
# The data directory holds the SQLite file (when no DATABASE_URL is set) and generated images.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# npm passes SIGTERM on to the gateway, which stops gracefully (in-flight requests finish).
CMD ["npm", "start"]
