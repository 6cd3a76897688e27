#!/usr/bin/env bash
# Runs npm jsonrepair's own test suite (src/index.test.ts, regular implementation) against a
# JavaScript `jsonrepair` function in process: the "JS function" mode of
# ../shared/peersuites/run_jsonrepair_suite.sh, which runs a binary per call. The shared harness
# (test rewriting, recording `expect`, report) is used as it is; only the shim is ours.
#
# usage: peersuite/run_jsonrepair_suite.sh MIRROR_GITDIR [TSV_OUT]
#
#   MIRROR_GITDIR  git directory of a jsonrepair snapshot (its src/ at HEAD is used)
#   TSV_OUT        optional per-assertion table (columns: ../shared/peersuites/README.md)
#
# Env: TOOLMEND_JS_MODULE (default: this package, dist/index.js) is the module whose
#      `jsonrepair` is tested; PEERSUITES_SHARED (default: ../shared/peersuites from the repo
#      root) the shared harness; PEERSUITES_CACHE, PEERSUITES_KEEP, PEERSUITES_REF as there.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
MIRROR=$1
TSV=${2:-}
if [[ -n $TSV ]]; then TSV=$(realpath -m "$TSV"); mkdir -p "$(dirname "$TSV")"; fi
HERE=$(cd "$(dirname "$0")" && pwd)
PKG=$(dirname "$HERE")
SHARED=${PEERSUITES_SHARED:-$(cd "$PKG/../.." && pwd)/../shared/peersuites}
SHARED=$(realpath "$SHARED")
CACHE=${PEERSUITES_CACHE:-$HOME/.cache/toolmend-peersuites}
REF=${PEERSUITES_REF:-HEAD}
MODULE=$(realpath "${TOOLMEND_JS_MODULE:-$PKG/dist/index.js}")

[[ -f $SHARED/js/harness.mjs ]] || { echo "no shared harness at $SHARED" >&2; exit 2; }
[[ -f $MODULE ]] || { echo "no module at $MODULE (run npm run build:ts)" >&2; exit 2; }
git --git-dir="$MIRROR" rev-parse --verify -q "$REF^{commit}" >/dev/null || { echo "no $REF in $MIRROR" >&2; exit 2; }

VITEST=$(git --git-dir="$MIRROR" show "$REF:package.json" |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s);process.stdout.write(((p.devDependencies||{}).vitest||"latest").replace(/^[\^~]/,""))})')
NPMDIR=$CACHE/vitest-$VITEST
if [[ ! -f $NPMDIR/node_modules/vitest/package.json ]]; then
  echo "installing vitest@$VITEST into $NPMDIR" >&2
  mkdir -p "$NPMDIR"
  [[ -f $NPMDIR/package.json ]] || echo '{"name":"peersuites-vitest","private":true}' >"$NPMDIR/package.json"
  (cd "$NPMDIR" && npm install --no-audit --no-fund --loglevel=error "vitest@$VITEST" >&2)
fi

WORK=$(mktemp -d)
if [[ ${PEERSUITES_KEEP:-0} == 1 ]]; then echo "work dir: $WORK" >&2; else trap 'rm -rf "$WORK"' EXIT; fi

git --git-dir="$MIRROR" archive "$REF" src | tar -x -C "$WORK"
cp "$HERE/peer_shim.ts" "$SHARED/js/peer_expect.ts" "$WORK/src/"
node "$SHARED/js/harness.mjs" prepare "$WORK/src/index.test.ts"
ln -s "$NPMDIR/node_modules" "$WORK/node_modules"
echo '{"name":"peersuite","private":true,"type":"module"}' >"$WORK/package.json"

export TOOLMEND_JS_MODULE=$MODULE PEER_RECORDS=$WORK/records.jsonl
: >"$PEER_RECORDS"
set +e
(cd "$WORK" && node node_modules/vitest/vitest.mjs run src/index.test.ts --silent \
  --testNamePattern 'jsonrepair \[.?regular.?\]' --reporter=json --outputFile="$WORK/vitest.json" \
  >"$WORK/vitest.log" 2>&1)
rc=$?
set -e
if [[ ! -s $WORK/vitest.json ]]; then
  echo "vitest exited $rc without a report:" >&2
  tail -30 "$WORK/vitest.log" >&2
  exit 1
fi
node "$SHARED/js/harness.mjs" finish "$WORK/vitest.json" "$PEER_RECORDS"
echo "peer: $(git --git-dir="$MIRROR" log -1 --format='%h %cs' "$REF"); function: $MODULE jsonrepair" >&2
python3 "$SHARED/py/report.py" jsonrepair "$PEER_RECORDS" ${TSV:+"$TSV"}
