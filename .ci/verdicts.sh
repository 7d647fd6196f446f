#!/usr/bin/env bash
# The shipped adapters through `mtcs validate`, then the README's Verdicts
# section from their reports (reports/verdicts.py). Called by the main job;
# runs alone too, once built (cmake --workflow --preset release) and with the
# venv (.ci/setup.sh --full):
#   .ci/verdicts.sh [OUTDIR]     reports go to OUTDIR (default reports/out/verdicts-<UTC>)
# Each library is judged as it is: its failures are findings, not errors of
# this script. Exit 1 only when an adapter could not be run (exit 2 of mtcs
# validate: no start, no handshake) or the section could not be written.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-reports/out/verdicts-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
py=.venv/bin/python
mtcs=build/release/mtcs
[ -x "$py" ] || { echo "verdicts: no $py (run .ci/setup.sh --full)" >&2; exit 1; }
[ -x "$mtcs" ] || { echo "verdicts: no $mtcs (build the release preset)" >&2; exit 1; }
# the golden files that hold plain (not masked) sparse cases: scipy.sparse's share
sparse_files=()
for f in unary binary reduce structure sparse_blas sparse_convert sparse_misc; do
  sparse_files+=(--golden "golden/$f.h5")
done
# name | adapter command | options
runs=(
  "numpy_ma-numpy_ma|$py -W ignore conformance/adapters/numpy_ma.py|--profile numpy_ma --level strict"
  "numpy_ma-torch|$py -W ignore conformance/adapters/numpy_ma.py|--profile torch"
  "torch_masked|$py -W ignore conformance/adapters/torch_masked.py|--profile torch --level strict"
  "scipy_sparse|$py -W ignore conformance/adapters/scipy_sparse.py|--profile torch ${sparse_files[*]}"
)
status=0
reports=()
for r in "${runs[@]}"; do
  IFS='|' read -r name cmd opts <<<"$r"
  echo "== verdicts: $name: mtcs validate --adapter \"$cmd\" $opts"
  rc=0
  # shellcheck disable=SC2086  # opts is a list of words
  "$mtcs" validate --adapter "$cmd" $opts --report-json "$out/$name.json" \
    --junit "$out/$name.junit.xml" > "$out/$name.log" 2>&1 || rc=$?
  tail -n 3 "$out/$name.log"
  case $rc in
    0|1) reports+=("$out/$name.json") ;;
    *) echo "   $name: exit $rc (see $out/$name.log)" >&2; status=1 ;;
  esac
done
if [ ${#reports[@]} -gt 0 ]; then
  python3 reports/verdicts.py "${reports[@]}" --readme README.md || status=1
  python3 reports/coverage.py "${reports[@]}" --html "$out/coverage.html" \
    --json "$out/coverage.json" || status=1
fi
echo "== verdicts: reports in $out; README.md's Verdicts section regenerated"
exit $status
