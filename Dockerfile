# A durable-bash command worker. Commands run inside this container, so give it the tools they need.
#
# Build stage: compiles the per-command supervisor (C, statically linked) and the TypeScript.
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

# Runtime: the worker under a restart loop, under tini. A crashed worker is restarted without
# ending the commands it ran; keep /var/lib/durable-bash on a volume so a restarted worker finds
# their records and output (see README, "Durability").
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=build /src/dist ./dist
COPY deploy/worker-loop.sh ./deploy/worker-loop.sh
ENV NODE_ENV=production
VOLUME ["/var/lib/durable-bash"]
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "/app/deploy/worker-loop.sh", "--spill-dir", "/var/lib/durable-bash/spill"]
