#!/usr/bin/env bash
# Runs json_repair's own test suite against the Python drop-in (`toolmend.loads`), through the
# shared peer-suite harness and a stand-in command (json_repair_bin.py).
#
#   bash bench/python/json_repair_suite.sh PYTHON JR_GITDIR [TSV_OUT]
#
#   PYTHON     an interpreter with the `toolmend` package installed
#   JR_GITDIR  a bare git dir of mangiucugna/json_repair (a snapshot of the repository)
# Env: PEERSUITES (default ../shared/peersuites beside the repository: the harness scripts,
#      kept outside the repo).
set -euo pipefail
py="$1" mirror="$2" tsv="${3:-}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
suites="${PEERSUITES:-$root/../shared/peersuites}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$py" "$here/json_repair_bin.py" > "$work/toolmend-py"
chmod +x "$work/toolmend-py"
bash "$suites/run_json_repair_suite.sh" "$mirror" "$work/toolmend-py" ${tsv:+"$tsv"}
