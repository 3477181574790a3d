# syntax=docker/dockerfile:1
# outboxd as one executable in a slim image (fly.toml deploys it; docs/deploy.md).
#   docker build -t outboxd .
#   docker run -p 8080:8080 -v outboxd_data:/data outboxd

# Build: Bun comes from package.json's devDependencies, so `npm ci` is all the toolchain there
# is. The executable is for the platform it is built on (the libSQL native module embedded is
# the one npm installed here): linux-x64 or linux-arm64 with glibc, matching the final stage.
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build
# Fail the image build, not the deploy, if the executable needs anything from node_modules:
# run it from outside /src against a scratch database.
RUN cd / && OUTBOXD_DATABASE_URL=file:/tmp/smoke/outboxd.db /src/dist/outboxd migrate && rm -rf /tmp/smoke

# Run: glibc and libgcc_s (needed by the libSQL native module) and the executable, nothing else.
# Bun carries its own CA certificates for https webhooks. Same Debian release as the build stage.
FROM debian:bookworm-slim
RUN groupadd --system --gid 10001 outboxd \
 && useradd --system --uid 10001 --gid outboxd --home-dir /data --no-create-home --shell /usr/sbin/nologin outboxd \
 && mkdir -p /data \
 && chown outboxd:outboxd /data
COPY --from=build /src/dist/outboxd /app/outboxd
# A volume mounted at /data gets this user as owner on Fly; with `docker run -v`, a new named
# volume copies /data's ownership from the image.
USER 10001:10001
ENV OUTBOXD_DATABASE_URL=file:/data/outboxd.db \
    OUTBOXD_HOST=0.0.0.0 \
    PORT=8080
VOLUME /data
# 8080: the API (PORT). 9091: /metrics alone, when OUTBOXD_METRICS_PORT=9091 is set (fly.toml does).
EXPOSE 8080 9091
CMD ["/app/outboxd", "serve"]
