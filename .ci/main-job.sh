#!/usr/bin/env bash
# The main job (README): install everything (torch venv included), check that
# the committed goldens are still what torch computes and that their
# outputs@torch-1.13.1 variants are what Debian's torch 1.13 computes, build and test, run the
# full conformance on every backend this machine has, the shipped adapters'
# verdicts (README "Verdicts", .ci/verdicts.sh), then the performance report. Results go to reports/out/.
#   .ci/main-job.sh [--quick]    --quick: the benchmark smoke matrix (< 2 min)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
for a in "$@"; do
  case "$a" in
    --quick) quick=(--quick) ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "main-job.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
  esac
done
bash .ci/setup.sh --full
status=0
echo "== golden freshness: regenerate with torch, compare within tolerance"
.venv/bin/python golden/check_fresh.py || {
  echo "   golden freshness: cases moved (listed above); regenerate or explain" >&2
  status=1
}
bash .ci/setup.sh --variants
echo "== torch-version variants: Debian's torch 1.13 on every golden case (outputs@torch-1.13.1)"
/usr/bin/python3 golden/variants.py --check || {
  echo "   variants: recorded variants are not what torch 1.13 gives; run" >&2
  echo "   /usr/bin/python3 golden/variants.py and commit golden/ and spec/SEMANTICS.md" >&2
  status=1
}
cmake --workflow --preset release

stamp=$(date -u +%Y%m%dT%H%M%SZ)
conf=reports/out/conformance-$stamp
mkdir -p "$conf"
for backend in cpu cuda build/release/plugins/example.so; do
  name=$(basename "$backend" .so)
  echo "== conformance: backend $backend"
  rc=0
  mkdir -p "$conf/repro-$name"
  # our own backends: every case of both profiles, at the strict level
  strict=(); case $backend in cpu|cuda) strict=(--require-all --level strict) ;; esac
  build/release/mtcs run --backend "$backend" --profile all "${strict[@]}" \
    --report-json "$conf/$name.json" \
    --junit "$conf/$name.junit.xml" --repro-dir "$conf/repro-$name" || rc=$?
  case $rc in
    0) ;;
    77) echo "   backend $backend: skipped on this machine (see SKIP line above)" ;;
    *) echo "   backend $backend: exit $rc" >&2; status=1 ;;
  esac
done
# the coverage page of every backend that ran (README, "Coverage report")
runs=("$conf"/*.json)
if [ -e "${runs[0]}" ]; then
  python3 reports/coverage.py "${runs[@]}" --html "$conf/coverage.html" \
    --json "$conf/coverage.json" || status=1
fi
echo "== conformance reports: $conf (coverage page: coverage.html)"

echo "== verdicts: numpy.ma, torch.masked and scipy.sparse through mtcs validate"
bash .ci/verdicts.sh "$conf/verdicts" || status=1

echo "== performance report"
build/release/mtcs bench "${quick[@]}"
exit $status
