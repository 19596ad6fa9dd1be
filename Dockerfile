# The aca worker. Build: docker build -t aca-worker .
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap python3 python3-pytest git tini ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
COPY scripts ./scripts
COPY scenarios ./scenarios
RUN npm ci --no-audit --no-fund && npm prune --omit=dev
ENV ACA_HOME=/var/lib/aca \
    ACA_WORKSPACES=/var/lib/aca/workspaces
VOLUME ["/var/lib/aca"]
EXPOSE 9464
# The worker would be PID 1 and Node never waits for children it did not start itself: processes a
# sandbox leaves to init (a bwrap whose parent was killed) would stay zombies. tini reaps them.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "bin/aca.js", "worker"]
