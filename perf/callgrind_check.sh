#!/usr/bin/env bash
# callgrind_check.sh - CI regression check of the Adagrad kernels by
# instruction count (never wall time): runs `mtcs_bench --callgrind-probe`
# under valgrind --tool=callgrind for every line of the bounds file and
# fails when instructions per unit exceed the bound.
#
# usage: callgrind_check.sh <mtcs_bench> <callgrind_bounds.txt> [macros|function] [valgrind]
#        callgrind_check.sh <mtcs_bench> <callgrind_bounds.txt> <mode> <valgrind> --update
#   macros:   the probe toggles collection itself (valgrind/callgrind.h)
#   function: collect only inside mtb_probe_step (--toggle-collect)
#   --update: print the bounds file for this build (measured * 1.10)
# A line "isa <name>" in the bounds file names the kernel code path the
# bounds hold for; on a machine where the probe runs another one, the check
# is skipped (exit 77).
# Unit: per element for dense, masked_dense, stream; per updated element
# (nnz) for the sparse paths.
set -u
bench=$1
bounds=$2
mode=${3:-macros}
valgrind=${4:-valgrind}
update=${5:-}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$mode" = macros ]; then
  collect=(--collect-atstart=no)
else
  collect=(--collect-atstart=no --toggle-collect=mtb_probe_step)
fi

fail=0
i=0
[ -n "$update" ] && sed -n '/^#/p' "$bounds"
want_isa=
while read -r path dtype n density bound rest; do
  case "$path" in ''|'#'*) continue ;; esac
  if [ "$path" = isa ]; then # the code path the bounds were measured on
    want_isa=$dtype
    [ -n "$update" ] && echo "isa $dtype"
    continue
  fi
  i=$((i + 1))
  out="$tmp/cg.$i"
  if ! probe=$("$valgrind" --tool=callgrind "${collect[@]}" --callgrind-out-file="$out" \
      "$bench" "--callgrind-probe=$path:$dtype:$n:$density" 2>"$tmp/log.$i"); then
    echo "FAIL $path $dtype n=$n density=$density: probe failed"
    cat "$tmp/log.$i"
    fail=1
    continue
  fi
  isa=$(sed -n 's/.* isa=\([a-z0-9]*\).*/\1/p' <<<"$probe")
  if [ -n "$want_isa" ] && [ "$isa" != "$want_isa" ] && [ -z "$update" ]; then
    echo "SKIP: the bounds are for the $want_isa code, this machine runs $isa under valgrind"
    exit 77
  fi
  ir=$(awk '/^(summary|totals):/ {v=$2} END {print v+0}' "$out")
  case "$path" in
    dense|masked_dense|stream) units=$(sed -n 's/.* n=\([0-9]*\).*/\1/p' <<<"$probe"); what=element ;;
    *) units=$(sed -n 's/.* specified=\([0-9]*\).*/\1/p' <<<"$probe"); what=nnz ;;
  esac
  if [ -z "$units" ] || [ "$units" -eq 0 ] || [ "$ir" -eq 0 ]; then
    echo "FAIL $path $dtype n=$n density=$density: no measurement (Ir=$ir units=$units): $probe"
    fail=1
    continue
  fi
  per=$(awk -v a="$ir" -v b="$units" 'BEGIN {printf "%.3f", a / b}')
  if awk -v a="$per" 'BEGIN {exit !(a < 0.05)}'; then
    echo "FAIL $path $dtype n=$n density=$density: $per Ir/$what is implausibly small" \
      "(collection mode '$mode' does not match how mtcs_bench was built?)"
    fail=1
    continue
  fi
  if [ -n "$update" ]; then
    awk -v p="$path" -v d="$dtype" -v n="$n" -v q="$density" -v x="$per" \
      'BEGIN {printf "%-14s %s %s %s %.2f\n", p, d, n, q, x * 1.10}'
    continue
  fi
  ok=$(awk -v a="$per" -v b="$bound" 'BEGIN {print (a <= b) ? "ok" : "FAIL"}')
  printf '%-4s %-13s %s n=%s density=%s: %s Ir/%s (bound %s; Ir %s over %s)\n' \
    "$ok" "$path" "$dtype" "$n" "$density" "$per" "$what" "$bound" "$ir" "$units"
  [ "$ok" = ok ] || fail=1
done <"$bounds"
[ "$i" -gt 0 ] || { echo "no kernels in $bounds"; exit 1; }
exit $fail
