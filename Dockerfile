# syntax=docker/dockerfile:1
# toolgate as a container image (docs/container.md). One stage builds and packs the npm package, one installs the
# tarball for production as a user would, and the image gets that install only: no compiler, no sources, no dev
# dependencies. test/package.test.ts runs this file's install command, ENV, CMD and HEALTHCHECK outside a container.
#
#   docker build -t toolgate .
#   docker run --rm -p 4000:4000 -e TOOLGATE_ADMIN_TOKEN=<a long random string> -v toolgate:/var/lib/toolgate toolgate

FROM node:20-slim AS build
# better-sqlite3 compiles SQLite when no prebuilt binary can be downloaded for this platform.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# prepack runs `npm run build`: dist/ and the inbox's build, then the tarball.
RUN npm pack --pack-destination /tmp && mv /tmp/toolgate-*.tgz /tmp/toolgate.tgz

FROM build AS install
WORKDIR /opt/toolgate
RUN npm install --omit=dev --no-audit --no-fund /tmp/toolgate.tgz

FROM node:20-slim
COPY --from=install /opt/toolgate /opt/toolgate
# The built-in demo behind a token: a container listens on every interface, which needs an "auth" section.
# Mount your own config here, or point TOOLGATE_CONFIG elsewhere.
COPY examples/container.json /etc/toolgate/toolgate.json
RUN mkdir -p /var/lib/toolgate && chown node:node /var/lib/toolgate
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    TOOLGATE_CONFIG=/etc/toolgate/toolgate.json \
    TOOLGATE_DB=/var/lib/toolgate/toolgate.db
# The image's own user (uid 1000), not root; the SQLite database lives in the volume.
USER node
WORKDIR /var/lib/toolgate
VOLUME /var/lib/toolgate
EXPOSE 4000
# Ready: the database answers with every migration applied and every tool source can serve (docs/observability.md#health).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and gets SIGTERM itself (docker stop), closes cleanly and exits 0.
CMD ["node", "/opt/toolgate/node_modules/toolgate/dist/src/cli.js"]
