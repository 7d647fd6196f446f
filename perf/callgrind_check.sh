#!/usr/bin/env bash
# callgrind_check.sh - CI regression check of the Adagrad kernels by
# instruction count (never wall time): runs `mtcs_bench --callgrind-probe`
# under valgrind --tool=callgrind on every line of the bounds file, all in
# one process (valgrind's start and the libraries' load, about 4 s, paid
# once: callgrind dumps after each probe's measured step, --dump-after),
# and fails when instructions per unit exceed the bound.
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

collect=(--collect-atstart=no --dump-after=mtb_probe_step)
[ "$mode" = macros ] || collect+=(--toggle-collect=mtb_probe_step)

# The bounds file: raw lines (kept in order for --update), the probes' fields.
raw=() paths=() dtypes=() ns=() dens=() bnds=() lineof=()
want_isa=
while IFS= read -r line || [ -n "$line" ]; do
  raw+=("$line")
  read -r path dtype n density bound rest <<<"$line"
  case "${path:-}" in ''|'#'*) continue ;; esac
  if [ "$path" = isa ]; then # the code path the bounds were measured on
    want_isa=$dtype
    continue
  fi
  paths+=("$path") dtypes+=("$dtype") ns+=("$n") dens+=("$density") bnds+=("${bound:-}")
  lineof+=($((${#raw[@]} - 1)))
done <"$bounds"
count=${#paths[@]}
[ "$count" -gt 0 ] || { echo "no kernels in $bounds"; exit 1; }

specs=
for ((k = 0; k < count; k++)); do
  specs+="${specs:+,}${paths[k]}:${dtypes[k]}:${ns[k]}:${dens[k]}"
done
out="$tmp/cg"
if ! "$valgrind" --tool=callgrind "${collect[@]}" --callgrind-out-file="$out" \
    "$bench" "--callgrind-probe=$specs" >"$tmp/probes" 2>"$tmp/log"; then
  echo "FAIL the probe run failed: $bench --callgrind-probe=$specs"
  cat "$tmp/probes" "$tmp/log"
  exit 1
fi
mapfile -t probes <"$tmp/probes"

fail=0
measured=()
for ((k = 0; k < count; k++)); do
  path=${paths[k]} dtype=${dtypes[k]} n=${ns[k]} density=${dens[k]} bound=${bnds[k]}
  probe=${probes[k]:-}
  isa=$(sed -n 's/.* isa=\([a-z0-9]*\).*/\1/p' <<<"$probe")
  if [ -n "$want_isa" ] && [ "$isa" != "$want_isa" ] && [ -z "$update" ]; then
    echo "SKIP: the bounds are for the $want_isa code, this machine runs $isa under valgrind"
    exit 77
  fi
  # dump k+1 holds probe k's measured step alone
  ir=$( [ -f "$out.$((k + 1))" ] && awk '/^(summary|totals):/ {v=$2} END {print v+0}' "$out.$((k + 1))")
  ir=${ir:-0}
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
  measured[${lineof[k]}]=$(awk -v p="$path" -v d="$dtype" -v n="$n" -v q="$density" -v x="$per" \
    'BEGIN {printf "%-14s %s %s %s %.2f", p, d, n, q, x * 1.10}')
  [ -n "$update" ] && continue
  ok=$(awk -v a="$per" -v b="$bound" 'BEGIN {print (a <= b) ? "ok" : "FAIL"}')
  printf '%-4s %-13s %s n=%s density=%s: %s Ir/%s (bound %s; Ir %s over %s)\n' \
    "$ok" "$path" "$dtype" "$n" "$density" "$per" "$what" "$bound" "$ir" "$units"
  [ "$ok" = ok ] || fail=1
done
if [ -n "$update" ]; then # the file again, each probe's line with its new bound
  [ "$fail" -eq 0 ] || exit 1
  for ((r = 0; r < ${#raw[@]}; r++)); do
    printf '%s\n' "${measured[r]:-${raw[r]}}"
  done
fi
exit $fail
