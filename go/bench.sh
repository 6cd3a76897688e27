#!/usr/bin/env bash
# Go's RepairCall against the same call in Rust, in one `go test -bench` run: medians of
# COUNT runs (default 5) and their ratios. Needs lib/<os>_<arch>/ built from a release archive.
set -euo pipefail
cd "$(dirname "$0")"
count="${COUNT:-5}"
go test -run '^$' -bench 'RepairCall$|Crossing' -benchtime "${BENCHTIME:-1s}" -count "$count" . |
    awk '
        /^Benchmark/ {
            name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
            n[name]++; t[name, n[name]] = $3
        }
        function median(name,    i, j, k, v, m, a) {
            m = n[name]
            for (i = 1; i <= m; i++) a[i] = t[name, i]
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { v = a[i]; a[i] = a[j]; a[j] = v }
            return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
        }
        END {
            printf "| call | Rust (ns) | Rust + record out (ns) | Go RepairCall (ns) | Go / Rust |\n|---|---:|---:|---:|---:|\n"
            split("valid repaired", calls, " ")
            for (c = 1; c <= 2; c++) {
                k = "RepairCall/" calls[c]
                r = median(k "/rust"); j = median(k "/rust+record"); g = median(k "/go")
                printf "| %s | %.0f | %.0f | %.0f | %.2f× |\n", calls[c], r, j, g, g / r
            }
            printf "\ncgo crossing alone (a call that does nothing): %.1f ns\n", median("Crossing")
        }'
