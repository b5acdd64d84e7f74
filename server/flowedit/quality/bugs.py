"""Single-line bugs injected into Python source, of the kinds people make (no I/O).

    operator    an arithmetic, bitwise or boolean operator replaced by a sibling (`+`→`-`, `and`→`or`)
    comparison  a comparison replaced by a sibling (`<`→`<=`, `==`→`!=`, `in`→`not in`)
    off-by-one  an integer literal one more or one less (`0`→`1`, `len(x) - 1`→`len(x) - 2`)
    swap        two adjacent positional arguments of a call swapped (`f(a, b)`→`f(b, a)`)
    variable    a name read replaced by another name the same function (or module) binds

A `Bug` changes exactly one line, the file still parses, and its syntax tree differs from the original's:
`candidates` offers only those. Choices made at random take a `random.Random`, so a seed fixes them.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

KINDS = ("operator", "comparison", "off-by-one", "swap", "variable")
OPERATORS = {"+": "-", "-": "+", "*": "/", "/": "*", "//": "%", "%": "//", "&": "|", "|": "&", "^": "&",
             "<<": ">>", ">>": "<<", "**": "*", "and": "or", "or": "and"}
COMPARISONS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "is": "is not",
               "is not": "is", "in": "not in", "not in": "in"}
_OP_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
            ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.Pow: "**",
            ast.And: "and", ast.Or: "or", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
_DECIMAL = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class Bug:
    """`text` with one line changed: `line` (0-based) reads `after` instead of `before`."""

    kind: str
    path: str
    line: int
    before: str
    after: str
    text: str  # the whole file with the bug

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line + 1}:{self.kind}"


@dataclass(frozen=True)
class _Edit:
    line: int  # 1-based, as ast counts
    start: int  # columns (characters) within the line
    end: int
    new: str


def candidates(path: str, text: str, kind: str, rng: random.Random) -> list[Bug]:
    """Every bug of `kind` this file offers (one per place; where a place allows several, `rng` picks)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = text.splitlines(keepends=True)
    tops = _top_level(tree)
    out, seen = [], set()
    for edit in _EDITS[kind](tree, lines, rng):
        bug = _apply(kind, path, lines, tops, edit)
        if bug is not None and (bug.line, bug.after) not in seen:
            seen.add((bug.line, bug.after))
            out.append(bug)
    return out


def _top_level(tree: ast.Module) -> dict[int, tuple[int, int, ast.stmt]]:
    """For each line in a top-level statement: that statement's lines (from, to: 0-based, end excluded) and
    its tree."""
    out = {}
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]) - 1
        last = node.end_lineno or node.lineno
        for line in range(first, last):
            out[line] = (first, last, node)
    return out


def _apply(kind: str, path: str, lines: list[str], tops: dict[int, tuple[int, int, ast.stmt]], edit: _Edit
           ) -> Bug | None:
    """The bug `edit` makes, if it changes one line, keeps the file parsing and changes its tree.

    A one-line change inside a top-level statement leaves the others as they were: only that statement is
    parsed again."""
    number = edit.line - 1
    if number not in tops:
        return None
    before = lines[number]
    after = before[: edit.start] + edit.new + before[edit.end :]
    if after == before or "\n" in after.rstrip("\r\n") or "\r" in after.rstrip("\r\n"):
        return None
    first, last, node = tops[number]
    try:
        statement = ast.parse("".join(lines[first:number]) + after + "".join(lines[number + 1 : last]))
    except (SyntaxError, ValueError):
        return None
    if len(statement.body) != 1 or _same(statement.body[0], node):
        return None
    changed = "".join(lines[:number]) + after + "".join(lines[number + 1 :])
    return Bug(kind, path, number, before.rstrip("\r\n"), after.rstrip("\r\n"), changed)


def _same(a: ast.AST, b: ast.AST) -> bool:
    """Whether two trees are equal, fields and all (positions aside)."""
    if type(a) is not type(b):
        return False
    for name in a._fields:
        x, y = getattr(a, name, None), getattr(b, name, None)
        if isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y) or not all(_same(i, j) if isinstance(i, ast.AST) else i == j
                                           for i, j in zip(x, y, strict=True)):
                return False
        elif isinstance(x, ast.AST) or isinstance(y, ast.AST):
            if not (isinstance(x, ast.AST) and isinstance(y, ast.AST) and _same(x, y)):
                return False
        elif x != y:
            return False
    return True


def _between(lines: list[str], left: ast.expr, right: ast.expr, word: str) -> _Edit | None:
    """Where `word` (an operator) stands between two operands on one line, outside parentheses."""
    if left.end_lineno != right.lineno or left.end_col_offset is None:
        return None
    line = lines[right.lineno - 1]
    gap = line[left.end_col_offset : right.col_offset]
    pattern = rf"(?<![\w<>=!*/]){re.escape(word)}(?![\w<>=!*/])" if not word.isalpha() else rf"\b{word}\b"
    if " " in word:
        pattern = r"\b" + r"\s+".join(word.split()) + r"\b"
    found = [m for m in re.finditer(pattern, gap)]
    if len(found) != 1:
        return None
    at = left.end_col_offset + found[0].start()
    return _Edit(right.lineno, at, at + len(found[0].group()), "")


def _operators(tree: ast.AST, lines: list[str], rng: random.Random) -> Iterator[_Edit]:
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            pairs = [(node.left, node.right, _OP_TEXT[type(node.op)])]
        elif isinstance(node, ast.BoolOp):
            word = _OP_TEXT[type(node.op)]
            pairs = [(a, b, word) for a, b in pairwise(node.values)]
        else:
            continue
        for left, right, word in pairs:
            edit = _between(lines, left, right, word)
            if edit is not None:
                yield _Edit(edit.line, edit.start, edit.end, OPERATORS[word])


def _comparisons(tree: ast.AST, lines: list[str], rng: random.Random) -> Iterator[_Edit]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
                word = _OP_TEXT[type(op)]
                edit = _between(lines, left, right, word)
                if edit is not None:
                    yield _Edit(edit.line, edit.start, edit.end, COMPARISONS[word])


def _off_by_one(tree: ast.AST, lines: list[str], rng: random.Random) -> Iterator[_Edit]:
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and type(node.value) is int and node.lineno == node.end_lineno
                and node.end_col_offset is not None):
            literal = lines[node.lineno - 1][node.col_offset : node.end_col_offset]
            if _DECIMAL.fullmatch(literal):
                value = int(literal) + (1 if literal == "0" or rng.random() < 0.5 else -1)
                yield _Edit(node.lineno, node.col_offset, node.end_col_offset, str(value))


def _swaps(tree: ast.AST, lines: list[str], rng: random.Random) -> Iterator[_Edit]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        pairs = [(a, b) for a, b in pairwise(args)
                 if a.lineno == a.end_lineno == b.lineno == b.end_lineno]
        if not pairs or len(args) != len(node.args):
            continue
        a, b = rng.choice(pairs)
        if a.end_col_offset is None or b.end_col_offset is None:
            continue
        line = lines[a.lineno - 1]
        first, second = line[a.col_offset : a.end_col_offset], line[b.col_offset : b.end_col_offset]
        between = line[a.end_col_offset : b.col_offset]
        if first != second and between.strip() == ",":
            yield _Edit(a.lineno, a.col_offset, b.end_col_offset, second + between + first)


def _variables(tree: ast.AST, lines: list[str], rng: random.Random) -> Iterator[_Edit]:
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in [tree, *scopes]:
        bound = sorted(_bound(scope))
        for node in _own_nodes(scope):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in bound:
                others = [name for name in bound if name != node.id]
                if others and node.end_col_offset is not None:
                    yield _Edit(node.lineno, node.col_offset, node.end_col_offset, rng.choice(others))


def _bound(scope: ast.AST) -> set[str]:
    """The names a function binds (its parameters, its assignments) or, for a module, its globals."""
    names = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = scope.args
        names |= {arg.arg for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if arg}
    for node in _own_nodes(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope` outside the functions, lambdas and classes nested in it."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


_EDITS = {"operator": _operators, "comparison": _comparisons, "off-by-one": _off_by_one, "swap": _swaps,
          "variable": _variables}


def inject(sources: list[tuple[str, str]], per_kind: int, seed: int = 0) -> list[Bug]:
    """`per_kind` bugs of each kind, sampled with `seed` from every place in every (path, text)."""
    rng = random.Random(seed)
    out = []
    for kind in KINDS:
        pool = [bug for path, text in sources for bug in candidates(path, text, kind, rng)]
        out += sorted(rng.sample(pool, min(per_kind, len(pool))), key=lambda b: (b.path, b.line, b.kind))
    return out
