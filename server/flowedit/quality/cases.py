"""The cases of a run, from source texts alone (no I/O): holes to complete and next edits to predict.

A completion case is a file with a hole: the text before the cursor and after the hole stays, the hole's
text is what a suggestion should be. Three kinds, as people meet them:
    body    a function's whole body removed; the cursor at its first line's indentation
    line    a line's content removed; the cursor after its indentation
    span    a line cut at a token boundary inside it; the cursor there, the rest of the line removed
A next-edit case replays a change: of the hunks that turned one version of a file into the next, hunk i is
typed (the editor reports it as a change), and hunk i+1 is the edit expected next — when it starts within
`NEARBY_LINES` of hunk i (a next edit is predicted around the cursor); a prediction that makes the hunks
after it too (each within `NEARBY_LINES` of the one before) is as right. Two more kinds come from the same
replay, where hunk i+1 is farther than that (or there is none):
    no-edit   the cursor stays at hunk i: nothing nearby is left to do, the right answer is no suggestion
    jump      the cursor then jumps to where hunk i+1 is (the user goes there): that hunk is expected
Each case also holds the text after the next few hunks (`final`): what a prediction accepted should still
hold then (characters kept).
Sampling is deterministic: the same sources and seed give the same cases.
"""

from __future__ import annotations

import ast
import difflib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

BODY_MAX_CHARS = 600  # longer bodies are not asked for whole (a suggestion is ~128 tokens)
LINE_MIN_CHARS = 12  # a line worth completing: this many characters after its indentation
NEARBY_LINES = 40
FEW = 3  # "the next few edits": what an accepted prediction's characters are checked against
_TOKEN = re.compile(r"\w+|[^\w\s]+|\s+")


@dataclass(frozen=True)
class Hole:
    """A completion case: `path`'s text with `expected` cut out at `offset`."""

    id: str
    kind: str  # body | line | span
    path: str
    text: str  # the file as opened: the hole's text is not in it
    offset: int
    expected: str


@dataclass(frozen=True)
class NextEditCase:
    """A next-edit case: `path` opened as `before`, the user's edit (`start`..`end` replaced by `typed`),
    then `expected` is the text after the edit that came next."""

    id: str
    path: str
    before: str
    start: int
    end: int
    typed: str
    expected: str
    further: tuple[str, ...] = ()  # the text after the hunks after that one, too (each nearby): also right
    kind: str = "next-edit"  # | no-edit (expected: the text as typed) | jump (the cursor moves to `cursor`)
    cursor: int | None = None  # where the cursor jumps once the edit is typed (jump cases)
    final: str | None = None  # the text after the next `FEW` hunks (None: as typed, no hunk after it)

    @property
    def after_typing(self) -> str:
        return self.before[: self.start] + self.typed + self.before[self.end :]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def function_bodies(path: str, text: str) -> list[Hole]:
    """Every function whose body (from its first line's indentation to its end) is at most
    `BODY_MAX_CHARS` and not only a docstring or `...`."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    starts = _line_starts(text)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.end_lineno is None:
            continue
        body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        if not body or body[0].lineno <= node.lineno:  # (a one-line `def f(): return x`)
            continue
        first = body[0]
        line_start = starts[first.lineno - 1]
        offset = line_start + first.col_offset
        end = starts[node.end_lineno] - 1 if node.end_lineno < len(starts) else len(text)
        expected = text[offset:end]
        if not expected.strip() or len(expected) > BODY_MAX_CHARS or expected.strip() in ("...", "pass"):
            continue
        out.append(Hole(f"{path}:{first.lineno}:body", "body", path, text[:offset] + text[end:], offset, expected))
    return out


def lines(path: str, text: str) -> list[Hole]:
    """Every line with at least `LINE_MIN_CHARS` after its indentation (comments and docstrings too:
    people type those)."""
    out = []
    for number, start in enumerate(_line_starts(text), start=1):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        line = text[start:end]
        content = line.lstrip(" \t")
        if len(content.rstrip()) < LINE_MIN_CHARS:
            continue
        offset = start + len(line) - len(content)
        out.append(Hole(f"{path}:{number}:line", "line", path, text[:offset] + text[end:], offset, text[offset:end]))
    return out


def spans(path: str, text: str, rng: random.Random) -> list[Hole]:
    """Every line worth completing, cut after one of its tokens (chosen by `rng`), at least 3 characters in."""
    out = []
    for hole in lines(path, text):
        line = hole.expected
        cuts = [m.end() for m in _TOKEN.finditer(line) if 3 <= m.end() <= len(line.rstrip()) - 3]
        if not cuts:
            continue
        cut = rng.choice(cuts)
        offset = hole.offset + cut
        number = hole.id.rsplit(":", 2)[-2]
        out.append(Hole(f"{hole.path}:{number}:span", "span", hole.path, text[:offset] + text[hole.offset + len(line):],
                        offset, line[cut:]))
    return out


def holes(sources: Iterable[tuple[str, str]], per_kind: int, seed: int = 0) -> list[Hole]:
    """`per_kind` cases of each kind (body, line, span), sampled with `seed` from every (path, text)."""
    rng = random.Random(seed)
    found: dict[str, list[Hole]] = {"body": [], "line": [], "span": []}
    for path, text in sources:
        found["body"] += function_bodies(path, text)
        found["line"] += lines(path, text)
        found["span"] += spans(path, text, rng)
    out = []
    for kind in ("body", "line", "span"):
        pool = found[kind]
        out += sorted(rng.sample(pool, min(per_kind, len(pool))), key=lambda h: h.id)
    return out


def next_edits(path: str, old: str, new: str) -> list[NextEditCase]:
    """The cases of one file's change from `old` to `new`: each hunk typed with the next one nearby expected."""
    return [c for c in replays(path, old, new) if c.kind == "next-edit"]


def replays(path: str, old: str, new: str) -> list[NextEditCase]:
    """Every case of one file's change from `old` to `new`, each hunk typed: next-edit when the next hunk is
    nearby, else no-edit and (when there is a next hunk) jump."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    hunks = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    made = lambda h: "".join(b[: h[4]] + a[h[2] :])  # noqa: E731 - the file with every hunk up to `h` made
    out = []
    for n, (_, i1, i2, j1, j2) in enumerate(hunks):
        # the file with every hunk before this one made (new lines up to j1, old lines from i1); then hunk i
        # typed (old lines i1..i2 become new lines j1..j2)
        before = "".join(b[:j1] + a[i1:])
        start = sum(map(len, b[:j1]))
        end = start + sum(map(len, a[i1:i2]))
        typed = "".join(b[j1:j2])
        later = hunks[n + 1 : n + 1 + FEW]
        final = made(later[-1]) if later else None
        if later and later[0][1] - i2 <= NEARBY_LINES:
            targets, last_end = [], i2
            for h in hunks[n + 1 :]:  # (and the hunks after it made one by one, while each is nearby)
                if h[1] - last_end > NEARBY_LINES:
                    break
                targets.append(made(h))
                last_end = h[2]
            out.append(NextEditCase(f"{path}:{j1 + 1}:next-edit", path, before, start, end, typed, targets[0],
                                    tuple(targets[1:]), final=final))
            continue
        as_typed = before[:start] + typed + before[end:]
        out.append(NextEditCase(f"{path}:{j1 + 1}:no-edit", path, before, start, end, typed, as_typed,
                                kind="no-edit", final=final))
        if later:  # the cursor goes to the line where the next hunk starts, in the text as typed
            cursor = sum(map(len, b[:j2])) + sum(map(len, a[i2 : later[0][1]]))
            out.append(NextEditCase(f"{path}:{j1 + 1}:jump", path, before, start, end, typed, made(later[0]),
                                    kind="jump", cursor=cursor, final=final))
    return out


def sample(cases: Sequence[NextEditCase], count: int, seed: int = 0) -> list[NextEditCase]:
    """`count` of `cases`, deterministically."""
    rng = random.Random(seed)
    return sorted(rng.sample(list(cases), min(count, len(cases))), key=lambda c: c.id)
