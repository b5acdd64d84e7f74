"""Checking a setup end to end (`flowedit doctor`, the server command `flowedit.checkSetup`): from what was
seen — each feature's engine asked once with a tiny request, the editor's capabilities as the server got
them — to findings, one sentence each with the setting (or the editor's part) that fixes it.

Pure: the glue (lsp/checkup.py) asks and measures; this module only judges and words. A `problem` makes
`flowedit doctor` exit non-zero; a `note` is a limit worth knowing (the embedded engine does not rewrite,
an editor without inline completion gets completion items instead).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["problem", "note"]
ErrorKind = Literal["unreachable", "key", "unsupported", "other"]

FEATURES = {"inline": "completions", "rewrite": "rewrites", "next_edit": "next edits", "review": "reviews"}


@dataclass
class Probe:
    """One feature's engine asked once: what answers it and how that went (no secret in it)."""

    feature: str  # "inline" | "rewrite" | "next_edit"
    engine: str  # "the embedded engine", "ws://host/v1/responses", "the bridge to http://host:11434"
    setting: str  # where the endpoint comes from: "endpoint", "rewrite.endpoint", "upstream", "(none: embedded)"
    model: str | None = None
    key_env: str | None = None  # the variable the key is read from (sent only to a remote endpoint)
    key_set: bool = False
    ttft_ms: float | None = None  # request sent → first text token
    text: str = ""  # what it answered (the first characters)
    error: str | None = None  # the message, as a user sees it
    error_kind: ErrorKind | None = None


@dataclass
class EditorSeen:
    """The editor as the server saw it in `initialize`."""

    name: str
    inline_completion: bool
    apply_edit: bool
    position_encoding: str
    grouped_rewrite_edits: bool = False  # flowedit's own clients: a rewrite is one undo step


@dataclass
class Finding:
    severity: Severity
    sentence: str
    fix: str  # the setting that fixes it, or what to change in the editor


@dataclass
class Report:
    probes: list[Probe]
    editor: EditorSeen | None
    logs: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "problem" for f in self.findings)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, **asdict(self)}


def judge(probes: list[Probe], editor: EditorSeen | None, logs: str) -> Report:
    """The findings of a checkup, problems first."""
    out: list[Finding] = []
    groups: dict[tuple[str, str | None], list[Probe]] = {}  # one finding for features that share it
    for p in probes:
        groups.setdefault((p.engine, p.error_kind), []).append(p)  # (the first one's words)
    for same in groups.values():
        p = same[0]
        what = ", ".join(FEATURES.get(q.feature, q.feature) for q in same)
        if p.error_kind == "unreachable":
            out.append(Finding("problem", f"{what}: {p.engine} cannot be reached: {p.error}",
                               f"{p.setting} (or start the server it names)"))
        elif p.error_kind == "key":
            key = f"the key in ${p.key_env}" if p.key_set else f"no key (${p.key_env} is not set)"
            out.append(Finding("problem", f"{what}: {p.engine} refused the request: {key}: {p.error}",
                               f"set ${p.key_env} in the editor's environment, or api_key_env to the variable "
                               "that holds it"))
        elif p.error_kind == "unsupported":
            out.append(Finding("note", f"{what}: {p.engine} does not do this: {p.error}",
                               f"{p.setting}: point it at a model (a Responses endpoint, or upstream: an "
                               "OpenAI-compatible server)"))
        elif p.error_kind is not None:
            out.append(Finding("problem", f"{what}: {p.engine} failed: {p.error}", p.setting))
    if editor is not None:
        if not editor.apply_edit:
            out.append(Finding("problem", f"rewrites: {editor.name} does not apply workspace edits "
                               "(workspace.applyEdit): a rewrite cannot stream into the document",
                               "the editor's LSP client: enable applyEdit, or use one that has it "
                               "(docs/editors.md)"))
        if not editor.inline_completion:
            out.append(Finding("note", f"completions: {editor.name} has no inline completion "
                               "(textDocument/inlineCompletion): suggestions come as completion items, no "
                               "ghost text", "an editor or plugin with inline completion (docs/editors.md)"))
    out.sort(key=lambda f: f.severity != "problem")
    return Report(probes, editor, logs, out)


def render(report: Report) -> str:
    """The report as a user reads it in a terminal or an editor's output panel."""
    lines = ["FlowEdit setup check", ""]
    for p in report.probes:
        what = FEATURES.get(p.feature, p.feature)
        model = f", model {p.model}" if p.model else ""
        key = f", key from ${p.key_env} ({'set' if p.key_set else 'not set'})" if p.key_env else ""
        head = f"  {what:<12} {p.engine}{model}{key} [{p.setting}]"
        if p.error is None:
            took = f"first token in {p.ttft_ms:.0f} ms" if p.ttft_ms is not None else "answered nothing"
            lines.append(f"{head}: ok, {took}")
        else:
            lines.append(f"{head}: {p.error_kind}")
    if report.editor is not None:
        e = report.editor
        yes = {True: "yes", False: "no"}
        lines += ["", f"  editor       {e.name}: inline completion {yes[e.inline_completion]}, applyEdit "
                  f"{yes[e.apply_edit]}, positions in {e.position_encoding}, a rewrite as one undo step "
                  f"{yes[e.grouped_rewrite_edits]}"]
    lines += [f"  logs         {report.logs}", ""]
    if not report.findings:
        lines.append("No problem found.")
    for f in report.findings:
        lines.append(f"{f.severity.upper()}: {f.sentence}. Fix: {f.fix}.")
    return "\n".join(lines)


def summary(report: Report) -> str:
    """One message for an editor's notification: the problems, or that there is none."""
    problems = [f for f in report.findings if f.severity == "problem"]
    if not problems:
        notes = len(report.findings)
        return "FlowEdit setup: no problem found" + (f" ({notes} note{'s' * (notes != 1)} in the log)" if notes else "")
    return "FlowEdit setup: " + " ".join(f"{f.sentence}. Fix: {f.fix}." for f in problems)
