"""Bundle the flowedit server into the VS Code extension: `client-vscode/bundled/`, for one VSIX target.

    python client-vscode/ci/bundle.py --target linux-x64 [--python 3.11 3.12 3.13 3.14]

The extension then needs no `pip install`: it starts `<python> bundled/tool/launch.py lsp` with any
CPython the bundle was made for (the launcher picks that version's libraries, or says which versions it
has). Layout, the way ruff-vscode and Microsoft's python-tools-extension-template bundle a tool:

    bundled/tool/launch.py      the launcher
    bundled/libs/common/        what is the same for every Python version (flowedit, pygls, pydantic, ...)
    bundled/libs/cp3XY/         what differs (compiled: pydantic-core, websockets' speedups, ...)
    bundled/libs/manifest.json  target, Python versions, flowedit's version

Wheels come from the package index for the target's platform (`pip install --target --platform
--python-version --only-binary=:all:`), so one machine bundles every target. numpy is left out: the
embedded engine needs only the libdivsufsort library file of the pydivsufsort wheel
(flowedit/engines/local/suffixes.py), not its numpy-bound Python part.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLIENT = HERE.parent
ROOT = CLIENT.parent
BUNDLED = CLIENT / "bundled"
PYTHONS = ["3.11", "3.12", "3.13", "3.14"]  # every CPython requires-python (>= 3.11) allows that has wheels
LIBRARY_ONLY = "pydivsufsort"


def _manylinux(arch: str) -> list[str]:
    return [f"manylinux_2_{minor}_{arch}" for minor in range(28, 4, -1)] + [
        f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}"]


def _macos(arch: str, first: int) -> list[str]:
    versions = [f"{major}_0" for major in range(15, 10, -1)] + ([f"10_{minor}" for minor in range(16, 8, -1)]
                                                                 if first == 10 else [])
    return [f"macosx_{v}_{a}" for v in versions for a in (arch, "universal2")]


PLATFORMS = {  # VSIX target → wheel platform tags, best first
    "linux-x64": _manylinux("x86_64"),
    "linux-arm64": _manylinux("aarch64"),
    "darwin-arm64": _macos("arm64", 11),
    "darwin-x64": _macos("x86_64", 10),
    "win32-x64": ["win_amd64"],
}


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True)


def build_wheel(out: Path) -> Path:
    """flowedit's wheel, built from this checkout."""
    _pip("wheel", "--no-deps", "--wheel-dir", str(out), str(ROOT))
    (wheel,) = out.glob("flowedit-*.whl")
    return wheel


def requirements(wheel: Path) -> list[str]:
    """The wheel's runtime requirements (no extras)."""
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(name).decode())
    return [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower().replace("_", "-")


def install(wheel: Path, target: str, python: str, into: Path) -> None:
    """flowedit and its dependencies for one Python version of one platform, into `into`."""
    platform = [a for tag in PLATFORMS[target] for a in ("--platform", tag)]
    common = ["install", "--target", str(into), "--no-compile", "--only-binary=:all:", *platform,
              "--python-version", python, "--implementation", "cp"]
    reqs = requirements(wheel)
    library_only = [r for r in reqs if _name(r) == LIBRARY_ONLY]
    others = [r for r in reqs if r not in library_only]
    _pip(*common, "--no-deps", str(wheel))
    _pip(*common, *others)
    _pip(*common, "--no-deps", *library_only)  # (no numpy: only its library file is read)
    # the library file (and the libraries it loads) is all the engine reads of pydivsufsort
    for path in (into / LIBRARY_ONLY).iterdir():
        if not path.name.startswith(("libdivsufsort.", "divsufsort.dll")):
            _remove(path)
    shutil.rmtree(into / "bin", ignore_errors=True)  # console scripts pip wrote for this machine
    for cache in into.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)


def _remove(path: Path) -> None:
    shutil.rmtree(path) if path.is_dir() else path.unlink()


def _same(a: Path, b: Path) -> bool:
    if a.is_file() or b.is_file():
        return a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False)
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(_same(a / d, b / d) for d in cmp.common_dirs)


def split_common(versions: dict[str, Path], common: Path) -> None:
    """Move each top-level entry that is the same in every version's folder to `common`."""
    common.mkdir(parents=True, exist_ok=True)
    first, *rest = versions.values()
    for entry in sorted(first.iterdir()):
        if all((other / entry.name).exists() and _same(entry, other / entry.name) for other in rest):
            shutil.move(str(entry), common / entry.name)
            for other in rest:
                _remove(other / entry.name)


def bundle(target: str, pythons: list[str]) -> dict:
    """Write `bundled/` for `target`; what was bundled."""
    shutil.rmtree(BUNDLED, ignore_errors=True)
    libs = BUNDLED / "libs"
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        versions = {}
        for python in pythons:
            tag = "cp" + python.replace(".", "")
            versions[tag] = libs / tag
            install(wheel, target, python, versions[tag])
        split_common(versions, libs / "common")
        version = wheel.name.split("-")[1]
    (BUNDLED / "tool").mkdir(parents=True)
    shutil.copy(HERE / "launch.py", BUNDLED / "tool" / "launch.py")
    manifest = {"target": target, "pythons": pythons, "flowedit": version}
    (libs / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, choices=sorted(PLATFORMS))
    parser.add_argument("--python", nargs="+", default=PYTHONS, help="CPython versions (default: %(default)s)")
    args = parser.parse_args(argv)
    manifest = bundle(args.target, args.python)
    size = sum(p.stat().st_size for p in BUNDLED.rglob("*") if p.is_file())
    print(f"bundled flowedit {manifest['flowedit']} for {args.target}, Python {' '.join(args.python)}: "
          f"{size / 2**20:.1f} MiB in {BUNDLED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
