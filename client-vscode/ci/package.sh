#!/usr/bin/env bash
# A platform VSIX that carries the server: `client-vscode/ci/package.sh linux-x64` writes
# client-vscode/flowedit-linux-x64.vsix (targets: linux-x64 linux-arm64 darwin-arm64 darwin-x64 win32-x64).
# PYTHON (default python3) runs ci/bundle.py, which needs pip and the package index.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: ci/package.sh TARGET}
"${PYTHON:-python3}" ci/bundle.py --target "$target"
npm run --silent typecheck   # (vsce runs the production build: vscode:prepublish)
npx vsce package --no-dependencies --target "$target" -o "flowedit-$target.vsix"
rm -rf bundled   # the universal VSIX (npm run package) carries no server
ls -l "flowedit-$target.vsix"
