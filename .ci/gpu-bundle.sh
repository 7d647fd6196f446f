#!/usr/bin/env bash
# The bundle a bare GPU machine runs (spec/gpu-machine.md): builds the `portable` preset,
# checks what its executables load, packs them, and writes the device-side script.
#   .ci/gpu-bundle.sh [--no-build]      --no-build: pack what build/portable already holds
# Writes, in build/portable/:
#   bin/                    the executables of target gpu_bundle (mtcs, mtcs_bench, the unit tests
#                           labelled cuda), stripped, + lib/ with what Debian ships only as a .so
#   gpu-bundle.tar.xz       bin/ packed: what a device call carries (with the script below)
#   run-gpu-checks.sh       the device side (no cmake there): unpacks the bundle and runs every
#                           check, results under $OUT
#   gpu-bundle.manifest     sizes, what each executable loads, the carry budget
# Fails (naming it) when an executable loads a library outside the allowed list, or when the
# working tree plus the carried files exceed what a device call takes (64 MiB).
# Run it in the checkout the device tool sends (the session's own), then call the tool with
#   carry: ["build/portable/gpu-bundle.tar.xz", "build/portable/run-gpu-checks.sh"]
#   command: bash build/portable/run-gpu-checks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "gpu-bundle.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
  esac
done
root=$PWD
dir=build/portable
limit=$((64 * 1024 * 1024)) # the device tool's working-tree limit (tree + carried paths)
# What a bare GPU machine has: glibc, libstdc++/libgcc, the driver's libcuda (cudart_static
# dlopens it, so it does not show in ldd).
allowed='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libdl\.so\.2|'
allowed+='libpthread\.so\.0|librt\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libcuda\.so\.1)$'
# Shipped beside the executables (bin/lib/, found through RUNPATH $ORIGIN/lib): Debian has
# no static archive of these.
bundled='^libbenchmark\.so\.'
# Neither carried nor static, found on the device: its CUDA toolkit, or torch's nvidia-* wheels
# (run-gpu-checks.sh puts their folder on LD_LIBRARY_PATH). cuSPARSE: 162 MB shared, and CUDA
# 13 has no static archive here (it needs libnvJitLink). mtcs dlopens it (impl/cuda/cusparse_lib.cu),
# so ldd names it only for what links it (mtcs_bench's adagrad_gs.cu baseline).
device='^(libcusparse|libnvJitLink)\.so\.[0-9]+$'
fail() { echo "gpu-bundle: $*" >&2; exit 1; }

t0=$SECONDS
if [ "$build" = 1 ]; then
  echo "== configure + build (preset portable)" >&2
  cmake --preset portable >/dev/null
  cmake --build --preset portable
fi
build_s=$((SECONDS - t0))
[ -s "$dir/gpu-bundle.list" ] ||
  fail "$dir/gpu-bundle.list missing: configure the portable preset first"
grep -q 'MT_STATIC_DEPS:BOOL=ON' "$dir/CMakeCache.txt" ||
  fail "$dir was not configured with MT_STATIC_DEPS=ON (cmake --preset portable)"
nvcc_used=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")
case "$nvcc_used" in
  ''|*NOTFOUND) fail "$dir has no CUDA (nvcc not found at configure time): its cuda checks" \
                     "could only SKIP; install the CUDA toolkit, then rerun" ;;
esac

rm -rf "$dir/bin"
mkdir -p "$dir/bin/lib"
manifest=$dir/gpu-bundle.manifest
{
  echo "# gpu-bundle.manifest - written by .ci/gpu-bundle.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  dirty=$(git diff --quiet HEAD 2>/dev/null || echo ' (+ uncommitted changes)')
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$dirty"
  echo "compiler $(${CC:-cc} --version | head -1)"
  command -v nvcc >/dev/null && echo "nvcc $(nvcc --version | tail -1)"
  sed -n 's/^CMAKE_CUDA_ARCHITECTURES:STRING=/cuda_architectures /p' "$dir/CMakeCache.txt"
  echo "build_seconds $build_s (0: --no-build)"
  echo
  echo "# executable  bytes_built  bytes_stripped  max_GLIBC  max_GLIBCXX  loads (ldd)"
} >"$manifest"

bad=()
while read -r exe; do
  [ -n "$exe" ] || continue
  [ -x "$exe" ] || fail "$exe (from gpu-bundle.list) was not built"
  name=$(basename "$exe")
  strip --strip-all -o "$dir/bin/$name" "$exe"
  loads=()
  while read -r lib arrow path _; do
    case "$lib" in /*) lib=$(basename "$lib") ;; esac
    [ -n "$lib" ] || continue
    if [[ "$lib" =~ $allowed ]]; then
      loads+=("$lib")
    elif [[ "$lib" =~ $device ]]; then
      loads+=("$lib(device)")
    elif [[ "$lib" =~ $bundled ]]; then
      [ "$arrow" = "=>" ] && [ -f "$path" ] || { bad+=("$name: $lib (not found here)"); continue; }
      readelf -d "$exe" | grep -q 'R.*PATH.*\$ORIGIN/lib' ||
        bad+=("$name: $lib is shipped in bin/lib but $name has no RUNPATH \$ORIGIN/lib")
      cp -L "$path" "$dir/bin/lib/$lib"
      strip --strip-unneeded "$dir/bin/lib/$lib"
      loads+=("$lib(bundled)")
    else
      bad+=("$name: $lib${path:+ ($path)}")
    fi
  done < <(env -i LD_LIBRARY_PATH= ldd "$exe" | sed 's/^[[:space:]]*//; s/ (0x[0-9a-f]*)$//')
  # the newest glibc / libstdc++ symbol versions it (or what it brings in bin/lib) needs
  syms=$(objdump -T "$dir/bin/$name" $(find "$dir/bin/lib" -type f) 2>/dev/null || true)
  vers=$(grep -o 'GLIBC_[0-9.]*' <<<"$syms" | sort -uV | tail -1 || true)
  versxx=$(grep -o 'GLIBCXX_[0-9.]*' <<<"$syms" | sort -uV | tail -1 || true)
  printf '%s  %d  %d  %s  %s  %s\n' "$name" "$(stat -c %s "$exe")" \
    "$(stat -c %s "$dir/bin/$name")" "${vers:--}" "${versxx:--}" "${loads[*]}" >>"$manifest"
done <"$dir/gpu-bundle.list"
if [ ${#bad[@]} -gt 0 ]; then
  printf 'gpu-bundle: loads a library a bare GPU machine lacks: %s\n' "${bad[@]}" >&2
  echo "  (allowed: glibc, libstdc++, libgcc_s, libcuda; link the rest statically:" \
       "cmake/static_deps.cmake)" >&2
  exit 1
fi

# the bundled executables alone, as the device will load them: nothing from here but bin/lib
for f in "$dir"/bin/*; do
  [ -f "$f" ] || continue
  out=$(env -i LD_LIBRARY_PATH= ldd "$f")
  if grep -q 'not found' <<<"$out"; then fail "$f: $(grep 'not found' <<<"$out" | head -1)"; fi
  if grep -qE 'libbenchmark' <<<"$out" &&
     ! grep -qE "libbenchmark.* => $root/$dir/bin/lib/" <<<"$out"; then
    fail "$f: libbenchmark resolves outside bin/lib:"$'\n'"$out"
  fi
done

tar=$dir/gpu-bundle.tar.xz
tar -C "$dir" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - bin |
  xz -9e -T1 >"$tar"
sha=$(sha256sum "$tar" | cut -d' ' -f1)

# ---- the device-side script ---------------------------------------------------
# The cuda-labelled tests, as ctest would run them, with paths made relative to the root.
tests=$(ctest --test-dir "$dir" --show-only=json-v1 -L cuda | python3 -c '
import json, os, shlex, sys
root, names = sys.argv[1], set(sys.argv[2:])
def order(t):  # unit tests, then the goldens smallest first: most checks within the deadline
    files = [a for a in t["command"] if a.endswith(".h5") and os.path.isfile(a)]
    return (bool(files), sum(os.path.getsize(f) for f in files), t["name"])
for t in sorted(json.load(sys.stdin)["tests"], key=order):
    cmd = t["command"]
    exe = os.path.basename(cmd[0])
    if exe not in names:
        sys.exit("gpu-bundle: test %s runs %s, which is not in the bundle" % (t["name"], cmd[0]))
    limit = next((int(p["value"]) for p in t.get("properties", []) if p["name"] == "TIMEOUT"), 300)
    args = [os.path.relpath(a, root) if a.startswith(root + "/") else a for a in cmd[1:]]
    env = next((p["value"] for p in t.get("properties", []) if p["name"] == "ENVIRONMENT"), [])
    env = "env %s " % " ".join(map(shlex.quote, env)) if env else ""
    print("  check %s %d %s\"$B\"/%s %s" % (t["name"], limit, env, exe,
                                           " ".join(map(shlex.quote, args))))
' "$root" $(ls "$dir/bin"))
[ -n "$tests" ] || fail "ctest lists no test labelled cuda in $dir"
# memcheck's conformance file: the smallest golden a cuda test reads, its cases inside one
# process (--no-fork: the sanitizer then attaches once, not to a child per case)
small=$(grep -o 'golden/[A-Za-z0-9_]*\.h5' <<<"$tests" | sort -u | xargs ls -S | tail -1)
unit=$(grep -o 'check unit\.[A-Za-z0-9_]*' <<<"$tests" | sed 's/check unit\.//')
memcheck=""
for u in $unit; do
  memcheck+="  mcheck memcheck.$u 300 \"\$B\"/$u"$'\n'
done
memcheck+="  mcheck memcheck.conformance.$(basename "$small" .h5).cuda 300 \"\$B\"/mtcs run"
memcheck+=" --no-fork --backend cuda --require-all --level strict --golden $small"
# ... and, after the benches and the report (it must not eat their time), the one golden
# whose cases call cuSPARSE (impl/cuda/cusparse_lib.cu: its descriptors, workspaces, SpGEMM's C)
late="  mcheck memcheck.conformance.sparse_blas.cuda 300 \"\$B\"/mtcs run"
late+=" --no-fork --backend cuda --require-all --level strict --golden golden/sparse_blas.h5"
# bench.256M: the uncoalesced grad (sparse_coo_dup) at 1% only (Google Benchmark's negative
# filter): at 100% its 512M entries, and torch's coalescing of them, are a risk to the deadline
bench=""
if [ -f "$dir/bin/mtcs_bench" ]; then
  json='--benchmark_out_format=json --benchmark_out="$OUT'
  bench="  bench bench.quick 200 --devs=cuda --quick $json/bench-quick.json\"
  bench bench.256M 200 --devs=cuda --sizes=256M --dtypes=f32 \\
    --paths=stream,dense,sparse_coo,touch,sparse_coo_dup --densities=1,100 --caches=warm \\
    --benchmark_filter=-path:sparse_coo_dup/.*density:100/ $json/bench-256M.json\""
fi
# the peers in the same job (perf/torch_peers.py on the device's own torch: fused, foreach, default
# and sparse-gradient Adagrad on the 256M run's device configurations), then the report
# (reports/render.py, standard library only: --no-plots)
peers="  check peers.torch_cuda 150 python3 perf/torch_peers.py --c-json \"\$OUT/bench-256M.json\" \\
    --filter /dev:cuda/ --min-time 0.1 --out \"\$OUT/torch-cuda.json\"
  check report 60 python3 reports/render.py --c \"\$OUT/bench-256M.json\" \\
    --torch \"\$OUT/torch-cuda.json\" --out \"\$OUT/report\" --no-plots"

# what mtcs dlopens: cuSPARSE's soname, from the header the build compiled against
csp_h=$(dirname "$(dirname "$nvcc_used")")/include/cusparse.h
csp_major=$(sed -n 's/^#define CUSPARSE_VER_MAJOR \([0-9]*\).*/\1/p' "$csp_h" 2>/dev/null)
[ -n "$csp_major" ] || fail "no CUSPARSE_VER_MAJOR in $csp_h (the CUDA toolkit's cuSPARSE header)"
dlopened="libcusparse.so.$csp_major"

script=$dir/run-gpu-checks.sh
{
  cat <<EOF
#!/usr/bin/env bash
# run-gpu-checks.sh - written by .ci/gpu-bundle.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ), from
# $(sed -n 's/^commit //p' "$manifest"). Regenerate it with the bundle; do not edit.
# The device side of spec/gpu-machine.md: run from the repository root on the GPU machine
#   bash build/portable/run-gpu-checks.sh
# Unpacks gpu-bundle.tar.xz into build/portable/bin, then runs every check below whatever the
# earlier ones gave, each under its own time limit and all within MTCS_GPU_DEADLINE_S (default
# 420 s: a session has 15 device minutes, so a first call must leave room to rerun what failed,
# spec/gpu-machine.md). Results under \$OUT (build/portable/gpu-out
# when unset): summary.txt, checks.log (each check's command and last 300 lines), env.txt,
# bench-*.json. Exit status: 0 every check passed, 77 none failed but some skipped (no
# device), 2 no check ran, 1 otherwise. MTCS_GPU_ONLY=<regex> runs only the checks whose
# name matches.
BUNDLE_SHA256=$sha
DLOPENED="$dlopened"
EOF
  cat <<'EOF'
set -u
cd "$(dirname "$0")/../.."
D=build/portable
B=$D/bin
OUT=${OUT:-$D/gpu-out}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt LOG=$OUT/checks.log ENV=$OUT/env.txt
: >"$SUMMARY"; : >"$LOG"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T0=$SECONDS
DEADLINE=${MTCS_GPU_DEADLINE_S:-420}
ONLY=${MTCS_GPU_ONLY:-}
nfail=0 nskip=0 nrun=0

say() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }
# check NAME LIMIT_S COMMAND...: runs it, records PASS (0), SKIP (77), TIMEOUT or FAIL
check() {
  local name=$1 limit=$2 rc v t detail
  shift 2
  [ -z "$ONLY" ] || [[ "$name" =~ $ONLY ]] || return 0
  local left=$((DEADLINE - (SECONDS - T0)))
  if [ "$left" -lt 20 ]; then
    nfail=$((nfail + 1))
    say "$(printf '%-44s %-8s' "$name" NOT_RUN) (MTCS_GPU_DEADLINE_S=$DEADLINE reached)"
    return 0
  fi
  [ "$limit" -le $((left - 10)) ] || limit=$((left - 10))
  nrun=$((nrun + 1))
  printf '\n==== %s (limit %ss): %s\n' "$name" "$limit" "$*" >>"$LOG"
  t=$SECONDS
  timeout -k 5 "$limit" "$@" >"$TMP/out" 2>&1
  rc=$?
  tail -n 300 "$TMP/out" >>"$LOG"
  case $rc in
    0) v=PASS ;;
    77) v=SKIP ;;
    124|137) v=TIMEOUT ;;
    *) v=FAIL ;;
  esac
  # the runner's own counts, else the last line the check printed
  detail=$(grep -E '^status counts:' "$TMP/out" | tail -1 | sed 's/^status counts: //')
  [ -n "$detail" ] || detail=$(grep -E 'ERROR SUMMARY|[Ee]rror|SKIP' "$TMP/out" | head -1)
  [ -n "$detail" ] || detail=$(grep -v '^[[:space:]]*$' "$TMP/out" | tail -1)
  if [ "$v" = PASS ] && [ -n "${CHECK_SKIP_RE:-}" ] && grep -qE "$CHECK_SKIP_RE" "$TMP/out"; then
    v=SKIP
  fi
  case $v in FAIL|TIMEOUT) nfail=$((nfail + 1)) ;; SKIP) nskip=$((nskip + 1)) ;; esac
  say "$(printf '%-44s %-8s rc=%-3s %4ss  %s' "$name" "$v" "$rc" $((SECONDS - t)) \
    "${detail:0:160}")"
}
# bench NAME LIMIT_S ARGS...: mtcs_bench, whose cases without a device report 'no device'
bench() {
  local name=$1 limit=$2
  shift 2
  CHECK_SKIP_RE='no device' check "$name" "$limit" "$B"/mtcs_bench "$@"
}

# mcheck NAME LIMIT_S COMMAND...: the command under compute-sanitizer's memcheck (device
# memory errors and leaks; exit 99 when it reports any)
mcheck() {
  local name=$1 limit=$2
  shift 2
  [ -z "$ONLY" ] || [[ "$name" =~ $ONLY ]] || return 0
  if [ -z "$SAN" ]; then
    nfail=$((nfail + 1)); say "$(printf '%-44s %-8s' "$name" NOT_RUN) (compute-sanitizer not found)"
    return 0
  fi
  check "$name" "$limit" "$SAN" --tool memcheck --leak-check full --error-exitcode 99 "$@"
}

# ---- the bundle ----
if ! echo "$BUNDLE_SHA256  $D/gpu-bundle.tar.xz" | sha256sum -c --status 2>/dev/null; then
  say "bundle: $D/gpu-bundle.tar.xz is missing or not the one this script was written with" \
      "(carry both files of one .ci/gpu-bundle.sh run)"
  exit 1
fi
rm -rf "$B"
if ! tar -C "$D" -xJf "$D/gpu-bundle.tar.xz" 2>"$TMP/tar"; then
  # no xz on the machine: Python's lzma
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$D/gpu-bundle.tar.xz" "$D" || { say "bundle: cannot unpack: $(cat "$TMP/tar")"; exit 1; }
fi

# ---- libraries the executables take from the machine (gpu-bundle.sh's device list) ----
# cuSPARSE and the like: the loader's path, else the CUDA toolkit's folders, else the
# nvidia-* wheels beside Python's torch; each folder found goes on LD_LIBRARY_PATH
# mtcs loads cuSPARSE itself (dlopen, impl/cuda/cusparse_lib.cu), so no ldd names it there:
# wanted all the same where the loader does not know it, and what it needs in turn
devlibs="" tried=" " found_libs=""
for round in 1 2 3 4; do # again for what a found library needs in turn (cuSPARSE: nvJitLink)
  missing=$( { for f in "$B"/* "$B"/lib/* $found_libs; do [ -f "$f" ] && ldd "$f" 2>/dev/null; done
               for l in $DLOPENED; do
                 ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$l " || echo "$l => not found"
               done; } | awk '/=> not found/ {print $1}' | sort -u)
  new=0
  for lib in $missing; do
    case "$tried" in *" $lib "*) continue ;; esac
    tried+="$lib " new=1 found=""
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib \
             $(python3 -c 'import sys; print(" ".join(p for p in sys.path if p))' 2>/dev/null |
               tr ' ' '\n' | while read -r p; do ls -d "$p"/nvidia/*/lib 2>/dev/null; done); do
      if [ -f "$d/$lib" ]; then found=$d; break; fi
    done
    if [ -n "$found" ]; then
      export LD_LIBRARY_PATH="$found${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      devlibs+="$lib from $found; " found_libs+=" $found/$lib"
    else
      devlibs+="$lib NOT FOUND; "
    fi
  done
  [ "$new" = 1 ] || break
done

# ---- the machine ----
{
  echo "device libraries: ${devlibs:-none needed}"
  echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host $(uname -srm)"
  echo "glibc $(ldd --version 2>&1 | head -1)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv,noheader
    nvidia-smi | grep -o 'CUDA Version: *[0-9.]*' | head -1
  else
    echo "nvidia-smi: not found"
  fi
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  echo "compute-sanitizer ${SAN:-not found} $( [ -n "$SAN" ] && "$SAN" --version | tail -1)"
  echo "bundle sha256 $BUNDLE_SHA256"
  for f in "$B"/* "$B"/lib/*; do
    [ -f "$f" ] && echo "ldd $(basename "$f"):" $(ldd "$f" | awk '{print $1 $2 $3}')
  done
} >"$ENV" 2>&1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
say "gpu: $(grep -m1 -vE '^(date|host|glibc|device libraries:) ' "$ENV")"
say "     $(grep -m1 '^CUDA Version' "$ENV" || echo 'CUDA Version: unknown')"
[ -z "$devlibs" ] || say "device libraries: $devlibs"
for f in "$B"/* "$B"/lib/*; do
  [ -f "$f" ] || continue
  if ldd "$f" 2>&1 | grep -q 'not found'; then
    nfail=$((nfail + 1))
    say "ldd $(basename "$f"): $(ldd "$f" 2>&1 | grep 'not found' | tr '\n' ' ')"
  fi
done

# ---- the checks ----
cuda_tests() {
EOF
  printf '%s\n' "$tests"
  echo "}"
  echo "memcheck() {"
  printf '%s\n' "$memcheck"
  echo "}"
  echo "benches() {"
  printf '%s\n' "${bench:-  :}"
  echo "}"
  echo "peers() {"
  printf '%s\n' "${bench:+$peers}"
  echo "  :"
  echo "}"
  echo "late() {"
  printf '%s\n' "$late"
  echo "}"
  cat <<'EOF'
cuda_tests
memcheck
benches
peers
late
say "total $((SECONDS - T0)) s; ran $nrun, failed/not run $nfail, skipped $nskip (results in $OUT)"
if [ "$nrun" -eq 0 ]; then say "no check ran (MTCS_GPU_ONLY='$ONLY' matches none?)"; exit 2; fi
[ "$nfail" -eq 0 ] || exit 1
[ "$nskip" -eq 0 ] || exit 77
exit 0
EOF
} >"$script"
chmod +x "$script"
bash -n "$script" || fail "$script: syntax error (bug in gpu-bundle.sh)"

# ---- what a device call carries ---------------------------------------------
tree=$(git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null |
       awk '{s+=$1} END {print s+0}')
shared=0
if [ -d shared ] && git check-ignore -q shared; then shared=$(du -sb shared | cut -f1); fi
carry=$(( $(stat -c %s "$tar") + $(stat -c %s "$script") ))
total=$((tree + shared + carry))
{
  echo
  echo "bin_bytes $(du -sb "$dir/bin" | cut -f1) (stripped executables + lib/, unpacked there)"
  echo "bundle_bytes $(stat -c %s "$tar") $tar sha256 $sha"
  echo "script_bytes $(stat -c %s "$script") $script"
  echo "tree_bytes $tree (tracked + untracked-not-ignored files of $root)"
  [ "$shared" = 0 ] || echo "shared_bytes $shared (ignored shared/, travels too)"
  echo "device_call_bytes $total of $limit ($((100 * total / limit)) %;" \
       "headroom $((limit - total)))"
  echo "carry [\"$tar\", \"$script\"]"
  echo
  echo "# ctest -L cuda, as the script runs them"
  printf '%s\n' "$tests"
} >>"$manifest"
cat "$manifest"
[ "$total" -le "$limit" ] ||
  fail "a device call would carry $total bytes (tree $tree + shared $shared + bundle $carry)," \
       "over the tool's $limit"

# ---- what can be checked without a GPU: the executables alone, no HDF5 anywhere -----
echo "== local check: bin/mtcs with an empty environment (CPU backend, then cuda)" >&2
env -i LD_LIBRARY_PATH= "$dir/bin/mtcs" run --backend cpu --require-all --exact-version \
  --level strict --golden golden/masked.h5 >/dev/null ||
  fail "bin/mtcs run --backend cpu --golden golden/masked.h5 failed (rerun it to see why)"
rc=0
env -i LD_LIBRARY_PATH= "$dir/bin/mtcs" run --backend cuda --require-all \
  --golden golden/masked.h5 >/dev/null 2>&1 || rc=$?
case $rc in
  77) echo "   cuda backend: SKIP (77): no device here" >&2 ;;
  0) echo "   cuda backend: ran on a device here and passed" >&2 ;;
  *) fail "bin/mtcs run --backend cuda exited $rc (expected 77 without a device)" ;;
esac
echo "gpu-bundle: ok; carry $tar and $script (device command: bash $script)" >&2
