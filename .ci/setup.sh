#!/usr/bin/env bash
# Installs what mtcs needs on a fresh Debian 12 machine (run as root or with sudo).
#   .ci/setup.sh          build + test dependencies (Debian packages only: the compilers and
#                         libraries, python3 with h5py/numpy for the adapter tests, chromium
#                         for the coverage page's browser test)
#   .ci/setup.sh --full   also a venv in .venv with torch, h5py, numpy, matplotlib, scipy
#                         (main job: torch peers, golden regeneration, report plots, adapters)
#                         and .venv-fbgemm (torch 2.14.1 + fbgemm-gpu-cpu 1.9.0, the FBGEMM peer;
#                         optional: a failed install is reported, the rest goes on)
#   .ci/setup.sh --variants  also Debian's python3-torch (1.13), for
#                         /usr/bin/python3 golden/variants.py (outputs@torch-1.13.1 variants)
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
variants=0
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    --variants) variants=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
  esac
done
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
pkgs=(build-essential cmake pkg-config libhdf5-dev hdf5-tools libopenblas-dev
      libbenchmark-dev valgrind python3 python3-venv python3-h5py clang libclang-rt-14-dev
      llvm chromium)
# llvm: llvm-dis, opt and llc, which turn CUDA's libdevice into the host object of the
# cuda_emu_libdevice plugin (tests/libdevice/README.md)
# the oldest torch we record variants for: Debian's own build, not PyPI's
[ "$variants" = 1 ] && pkgs+=(python3-torch)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ "$full" = 1 ]; then
  py=/usr/bin/python3; [ -x "$py" ] || py=python3
  [ -x .venv/bin/python ] || "$py" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r golden/requirements.txt
  # The FBGEMM peer (perf/peers_fbgemm.py) gets its own venv: fbgemm-gpu-cpu 1.9.0 loads
  # with torch 2.14.1, not with .venv's 2.15. Optional: a failure is said, not fatal.
  fb_err=
  fb_check='import torch, fbgemm_gpu; torch.ops.fbgemm.split_embedding_backward_codegen_adagrad_cpu'
  if [ -x .venv-fbgemm/bin/python ] && .venv-fbgemm/bin/python -c "$fb_check" 2>/dev/null; then
    echo "setup: .venv-fbgemm already imports fbgemm_gpu"
  elif { [ -x .venv-fbgemm/bin/python ] || "$py" -m venv .venv-fbgemm; } &&
       .venv-fbgemm/bin/python -m pip install -q --upgrade pip &&
       .venv-fbgemm/bin/python -m pip install -q -r perf/requirements-fbgemm.txt &&
       fb_err=$(.venv-fbgemm/bin/python -c "$fb_check" 2>&1); then
    echo "setup: .venv-fbgemm ready (FBGEMM peer)"
  else
    why=${fb_err:-pip install failed, see above}
    echo "setup: WARNING: FBGEMM peer unavailable: .venv-fbgemm could not be built or does" \
         "not import fbgemm_gpu (${why##*$'\n'});" \
         "the main job continues without the fbgemm peers" >&2
  fi
fi
echo "setup: done"
