#!/usr/bin/env bash
# The dependency floors in pyproject.toml, proved: a fresh venv gets every direct dependency at the lowest
# version pyproject.toml allows (uv's --resolution lowest-direct; transitive ones at their newest), then the
# CLI and the unit tests run on it. A floor that is too low fails here (websockets 15 has no websockets.proxy:
# `flowedit --help` itself crashes). Usage: .ci/lowest.sh [VENV]   (default .venv-lowest; made anew each run)
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${1:-.venv-lowest}
python=${PYTHON:-python3}
if [ -e "$venv" ]; then
  [ -f "$venv/pyvenv.cfg" ] || { echo "lowest.sh: $venv exists and is not a venv; not removing it" >&2; exit 2; }
  rm -rf "$venv"
fi
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q uv
"$venv/bin/uv" pip install -q --python "$venv/bin/python" --resolution lowest-direct -e '.[test]'

echo "lowest.sh: runtime dependencies as installed:"
"$venv/bin/uv" pip list --python "$venv/bin/python" 2>/dev/null |
  grep -iE '^(pygls|lsprotocol|websockets|unidiff|pydantic|pydivsufsort|pathspec|httpx2) ' | sed 's/^/  /'

"$venv/bin/flowedit" --help >/dev/null
"$venv/bin/flowedit" --version

# Hypothesis: a fixed seed, so that a red run here means a floor is wrong and not that a random search found
# something new (the full suite keeps searching), and an example database of this venv's own.
rc=0
HYPOTHESIS_STORAGE_DIRECTORY="$venv/hypothesis" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  --hypothesis-seed=0 tests/core tests/model tests/engines tests/test_cli.py tests/test_layout.py || rc=$?
if [ "$rc" -ne 0 ]; then
  [ "$rc" -eq 5 ] && echo "lowest.sh: pytest collected no tests" >&2
  echo "lowest.sh: FAILED (pytest exit $rc)" >&2
  exit 1
fi
echo "lowest.sh: ok"
