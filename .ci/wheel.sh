#!/usr/bin/env bash
# The package as users get it: build the wheel (python -m build), install THAT wheel into a fresh venv
# (dependencies from the index), and run `flowedit --version`, `flowedit demo --quick` and `flowedit eval
# --quick` (nothing more installed) from it, outside the checkout.
# Usage: .ci/wheel.sh [VENV_DIR]   (default: a temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${1:-$(mktemp -d)}
rm -rf "$work/venv" "$work/dist"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check build
"$work/venv/bin/python" -m build --wheel --outdir "$work/dist" "$root" >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/flowedit-*.whl)
# (not `unzip -l | grep -q`: grep stops at the match, unzip dies of SIGPIPE, and pipefail fails the check)
"$work/venv/bin/python" -c 'import sys, zipfile; sys.exit("flowedit/py.typed" not in zipfile.ZipFile(sys.argv[1]).namelist())' \
  "$wheel" || { echo "the wheel lacks flowedit/py.typed" >&2; exit 1; }
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
cd "$work"   # not the checkout: the installed package alone
"$work/venv/bin/flowedit" --version
"$work/venv/bin/flowedit" demo --quick --no-color | tail -3
# the quality harness after a plain install, outside a repository: the standard library's suite (~5 s)
"$work/venv/bin/flowedit" eval --quick | tail -4
echo "wheel ok: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
