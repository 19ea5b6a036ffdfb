# syntax=docker/dockerfile:1
# Multi-stage build of toolreg-server (and the toolreg CLI).
# Build:  docker build -t toolreg .
# Run:    docker run -p 8080:8080 -e TOOLREG_LISTEN=0.0.0.0:8080 toolreg

FROM rust:1.95-bookworm AS build
# libpq and OpenSSL are compiled into the binary (pq-sys `bundled`,
# openssl-sys `vendored`); the image's perl, make and cc build them.
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p toolreg-server -p toolreg \
 && strip target/release/toolreg-server target/release/toolreg

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data toolreg \
 && mkdir -p /data && chown toolreg /data
COPY --from=build /src/target/release/toolreg-server /usr/local/bin/toolreg-server
COPY --from=build /src/target/release/toolreg /usr/local/bin/toolreg
USER toolreg
WORKDIR /data
# The compiled-in OpenSSL looks for CA certificates under /usr/local/ssl;
# point it at Debian's bundle (PostgreSQL with sslrootcert=system).
ENV TOOLREG_LISTEN=0.0.0.0:8080 \
    TOOLREG_DATA_DIR=/data \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["toolreg-server"]
CMD ["serve"]
