# A durable-bash command worker. Commands run inside this container, so give it the tools they need.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY dist ./dist
ENV NODE_ENV=production
ENTRYPOINT ["node", "dist/cli/main.js", "worker"]
