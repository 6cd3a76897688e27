#!/usr/bin/env bash
# The chat-template check (#28): fetch the templates llama.cpp ships (vendored in the
# llama-cpp-python sdist on PyPI, version pinned below) into a cache outside the repo, then
# render tool-call turns through each and check recovery reads back exactly those calls
# (crates/toolmend/examples/template_check.rs). Opt-in: CI does not run it (it downloads).
# The templates are other people's files: they stay in the cache, never in the repo.
#
#   bench/templates.sh [--show NAME]     exit 1 when any template's calls read back wrong
set -euo pipefail
VERSION=0.3.36
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/toolmend-templates/llama-cpp-python-$VERSION"
DIR="$CACHE/templates"
if [ ! -d "$DIR" ] || [ -z "$(ls "$DIR"/*.jinja 2>/dev/null)" ]; then
    mkdir -p "$CACHE/download" "$DIR"
    python3 -m pip download --quiet --no-deps --no-binary :all: \
        "llama-cpp-python==$VERSION" -d "$CACHE/download"
    tar -xzf "$CACHE/download/llama_cpp_python-$VERSION.tar.gz" -C "$CACHE/download" \
        --wildcards "*/vendor/llama.cpp/models/templates/*.jinja"
    mv "$CACHE/download"/llama_cpp_python-"$VERSION"/vendor/llama.cpp/models/templates/*.jinja "$DIR/"
    rm -rf "$CACHE/download"
fi
cd "$(dirname "$0")/.."
cargo run --quiet -p toolmend --example template_check -- "$DIR" "$@"
