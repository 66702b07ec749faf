# A durable-bash command worker that keeps sessions apart (docs/CONTAINMENT.md, "Sessions apart"):
# each command runs inside this container as its session's own uid, in its own PID namespace and
# its session's network. Give the image the tools commands need. docker-compose.yml runs it with the
# capabilities and profiles that takes, each with its reason (docs/OPERATIONS.md, "The container").
#
# Node.js 24 (20 is past its end of life), the release `npm test` runs its Node.js 24 tests on
# (scripts/node-requirements.txt), on Debian bookworm as the machines the tests run on. Pinned by
# version; pin the digest too (`docker buildx imagetools inspect node:24.19.0-bookworm-slim`).
#
# Build stage: compiles the per-command supervisor (C, statically linked) and the TypeScript.
FROM node:24.19.0-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

# Runtime: the worker under a restart loop, under tini. A crashed worker is restarted without
# ending the commands it ran; keep /var/lib/durable-bash on a volume so a restarted worker finds
# their records and output (see README, "Durability").
FROM node:24.19.0-bookworm-slim
# slirp4netns: each session's way out (its own network, without the container's loopback).
# bubblewrap: the launcher of a worker without root, and `--sandbox bwrap`. The rest a worker with
# root uses (nsenter, unshare, umount) is util-linux and mount, already in the base image.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini slirp4netns bubblewrap \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=build /src/dist ./dist
COPY deploy/worker-loop.sh ./deploy/worker-loop.sh
ENV NODE_ENV=production
VOLUME ["/var/lib/durable-bash"]
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "/app/deploy/worker-loop.sh", "--spill-dir", "/var/lib/durable-bash/spill"]
