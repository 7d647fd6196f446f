#!/usr/bin/env bash
# Installs what mtcs needs on a fresh Debian 12 machine (run as root or with sudo).
#   .ci/setup.sh          build + test dependencies (Debian packages only; no Python needed)
#   .ci/setup.sh --full   also a venv in .venv with torch, h5py, numpy, matplotlib, scipy
#                         (main job: torch peers, golden regeneration, report plots)
#   .ci/setup.sh --variants  also Debian's python3-torch (1.13) and python3-h5py, for
#                         /usr/bin/python3 golden/variants.py (outputs@torch-1.13.1 variants)
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
variants=0
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    --variants) variants=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
  esac
done
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
pkgs=(build-essential cmake pkg-config libhdf5-dev hdf5-tools libopenblas-dev
      libbenchmark-dev valgrind python3 python3-venv python3-h5py clang libclang-rt-14-dev)
# the oldest torch we record variants for: Debian's own build, not PyPI's
[ "$variants" = 1 ] && pkgs+=(python3-torch python3-h5py)
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
fi
echo "setup: done"
