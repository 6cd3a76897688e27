# syntax=docker/dockerfile:1
# toolmend serve: the repairing OpenAI/Anthropic-compatible proxy (README, "Proxy").
#   docker build -t toolmend .
#   docker run --rm -p 8080:8080 toolmend --upstream http://host.docker.internal:8000
# Every argument after the image name goes to `toolmend serve`; it listens on 0.0.0.0:8080.
# Security: on 0.0.0.0 anyone who reaches the port can use the upstream. Pass --api-key (or
# TOOLMEND_API_KEY) so clients must present a key. With --upstream-api-key, only
# --allow-paths are forwarded with it (default: /v1/chat/completions, /v1/messages,
# /v1/responses, /api/chat, /v1/models[/*], /api/tags; others get 403). The proxy warns on
# stderr when it listens beyond loopback without --api-key.

# ---- build: the release binary, with the registry and target dir cached between builds ----
FROM rust:1.95-slim-trixie AS build
WORKDIR /src
# make: jemalloc (the binary's allocator, crates/toolmend-cli/Cargo.toml) builds from C source.
RUN apt-get update && apt-get install -y --no-install-recommends make && rm -rf /var/lib/apt/lists/*
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin toolmend \
    && install -D -m 0755 target/release/toolmend /out/toolmend

# ---- runtime: glibc and the binary, nothing else (TLS roots are built in: rustls) ----------
FROM debian:trixie-slim
COPY --from=build /out/toolmend /usr/local/bin/toolmend
# Any unprivileged uid; the proxy writes nothing to disk.
USER 65532:65532
EXPOSE 8080
# Exec form: toolmend is PID 1 and gets SIGTERM itself, drains, and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/toolmend", "serve", "--listen", "0.0.0.0:8080"]
CMD ["--help"]
