"""Start the flowedit server bundled in the VS Code extension, with this Python's libraries.

    <python> bundled/tool/launch.py lsp      (what the extension runs; any flowedit command works)

Picks `bundled/libs/cp3XY` for the running CPython, or exits with status 3 and one line on stderr that
says which versions the bundle has (the extension shows it).
"""

import os
import sys

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
TAG = "cp%d%d" % sys.version_info[:2]


def main() -> int:
    have = sorted((d for d in os.listdir(LIBS) if d.startswith("cp")), key=lambda d: int(d[3:]))
    if sys.implementation.name != "cpython" or TAG not in have:
        sys.stderr.write("flowedit: %s %s (%s) cannot run the bundled server: it is bundled for CPython %s; "
                         "set flowedit.server.python to one of those\n"
                         % (sys.implementation.name, sys.version.split()[0], sys.executable,
                            ", ".join("%s.%s" % (d[2], d[3:]) for d in have)))
        return 3
    ours = [os.path.join(LIBS, TAG), os.path.join(LIBS, "common")]
    sys.path[:0] = ours
    # and for the processes it starts (`python -m flowedit.cli ...`)
    os.environ["PYTHONPATH"] = os.pathsep.join(ours + [p for p in [os.environ.get("PYTHONPATH")] if p])
    from flowedit.cli import main as flowedit

    return flowedit(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
