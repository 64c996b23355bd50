# Multi-stage: build (TypeScript + the workflow bundle) → runtime with production dependencies only (no devnet/
# tooling: only npm start's embedded default loads it).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build && node dist/scripts/bundle-workflows.js dist/workflow-bundle.js && rm -rf dist/devnet && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Migrations are read relative to dist/src/db at run time.
COPY --from=build /app/drizzle ./dist/drizzle
RUN mkdir -p /var/lib/gateway && chown node:node /var/lib/gateway
USER node
EXPOSE 8080 9464
CMD ["node", "dist/src/entry/api.js"]
