"""Recognising an editor's report of the edit we sent: the batch in flight and the probe of its echo.

A batch is built against the document's version V. The editor either applies it as the very next change
after V, or not at all (VS Code answers `applied: false`, Neovim 0.7 silently skips it yet answers
`applied: true`). So the first notification the document reports after V decides: if its first changes,
together, have the batch's effect, they are the batch's echo (VS Code reports one edit as several minimal
pieces, Neovim merges it with the user's typing that follows); otherwise the batch was not applied and
those changes are the user's.

Some editors also make the answer `applied: true` exact enough to go on without the echo: `EditorHabits`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowedit.core.rewrite.events import EditBatch
from flowedit.core.text.chunks import Text
from flowedit.core.text.document import LINE_ENDS, Change, compose, same_effect, with_line_ends


@dataclass(frozen=True)
class EditorHabits:
    """What an editor does with the edits it is sent (docs/editor-habits.md), which decides how far its answer
    can be trusted."""

    # `applied: true` means applied: it refuses an edit for another version than its own. Not Neovim,
    # which skips a stale edit yet answers `applied: true`.
    applied_means_applied: bool = True
    # Each applied edit moves its version by exactly one, so the version after it is known (VS Code,
    # Eglot): the next edit can follow without waiting for the echo (Eglot sends none while the user types).
    one_version_per_edit: bool = False
    # It writes the line breaks it inserts in its buffer's EOL (VS Code), which the text may not show.
    normalises_eol: bool = True
    # A plain-text completion item's line breaks land as line breaks. Not through Neovim's omnifunc:
    # Vim's complete() writes a NUL for each (0.7.2, which declares no snippet support).
    plain_items_keep_lines: bool = True
    # It loses what comes in the same read as the answer to a request it waits for (lsp-mode 8: its
    # `lsp-request` throws out of the process filter from the answer's callback, dropping the messages
    # parsed after it): so nothing of a rewrite is asked of it until this long after the command's answer,
    # and an edit it never answers is given up (and sent again) sooner.
    answer_gap_s: float = 0.0
    apply_timeout_s: float = 30.0
    # It answers `workspace/applyEdit`. ALE applies the edit and never answers (it declares `applyEdit:
    # false`): the edit is sent without waiting, and its echo (ALE's next didChange) says it landed.
    answers_edits: bool = True

    @classmethod
    def of_client(cls, name: str, *, own_edits: bool = False) -> EditorHabits:
        """The habits of the client calling itself `name` (`clientInfo.name`); `own_edits`: it applies
        rewrite edits through flowedit's own request (the VS Code extension checks each version itself)."""
        lowered = name.lower()
        if "neovim" in lowered or "nvim" in lowered:
            return cls(applied_means_applied=False, plain_items_keep_lines=False)
        if lowered == "eglot":
            return cls(one_version_per_edit=True, normalises_eol=False)
        if lowered == "ale":  # its complete() writes a NUL for a line break, like Neovim's omnifunc
            return cls(applied_means_applied=False, normalises_eol=False, plain_items_keep_lines=False,
                       answers_edits=False)
        if lowered == "emacs":  # lsp-mode
            return cls(normalises_eol=False, answer_gap_s=0.05, apply_timeout_s=3.0)
        return cls(one_version_per_edit=own_edits)


@dataclass
class InFlight:
    """A batch sent to the editor and what the session knows of its fate."""

    batch: EditBatch
    before: str  # the replaced text, for the record
    sent_at: float
    advance: int  # answer characters (replace mode) or blocks (diff mode) this batch writes
    epoch: int
    final: bool = False  # replace mode: it also removes what is left of the old text
    acked: bool | None = None  # None: no answer yet
    echoed: bool = False
    dead: bool = False  # overtaken by another change: it was not (and will not be) applied
    snapshot: tuple = ()  # the session's bookkeeping when it was sent
    since: list[Change] = field(default_factory=list)  # every change seen until the editor answered
    # what the session knew of line ends before this batch's echo taught it the editor's: put back if the
    # editor then refuses the batch (the "echo" was the user's typing)
    unlearn: tuple | None = None


class EchoProbe:
    """The changes of the first notification after a batch's version, held until they are known to be
    the batch's echo (`add` says so) or not (the notification ended first: they are the user's)."""

    def __init__(self, expected: Change, eol_unknown: bool = True) -> None:
        self.expected = expected
        # whether the editor may have written the batch's line breaks its own way: only while the buffer's
        # line ends are not known (an editor that keeps them as sent, or one already seen to write them):
        # otherwise a user's Enter where the batch inserts a CR LF would read as the batch
        self.eol_unknown = eol_unknown
        self.held: list[Change] = []
        self.eol: str | None = None  # the line ends the editor wrote the batch in, when not ours
        self._base: str | Text = ""  # the text at the batch's version
        self._effect: Change | None = None  # the held changes as one change against that text

    def add(self, change: Change, before: str | Text) -> bool:
        """Hold one more change (`before`: the text it applied to); True once the held changes are the
        batch as the editor applied it.

        Editors normalise the line breaks they insert to the buffer's (VS Code does, even in a one-line
        file of a CRLF buffer, where nothing showed the buffer's EOL): an echo equal to the batch up to
        line ends is the batch; `eol` then names the line ends it was written in."""
        if not self.held:
            self._base, self._effect = before, change
        else:
            assert self._effect is not None  # (set with the first held change)
            self._effect = compose(self._effect, change, before)
        self.held.append(change)
        expected = self.expected
        if same_effect(self._effect, expected, self._base):
            return True
        if not self.eol_unknown or ("\r" not in expected.text and "\n" not in expected.text):
            return False
        for eol in LINE_ENDS:
            variant = with_line_ends(expected.text, eol)
            if variant != expected.text and same_effect(self._effect, Change(expected.start, expected.end, variant),
                                                        self._base):
                self.eol = eol
                return True
        return False

    @property
    def as_applied(self) -> Change:
        """The batch's change as the editor applied it (in its line ends)."""
        e = self.expected
        return e if self.eol is None else Change(e.start, e.end, with_line_ends(e.text, self.eol))
