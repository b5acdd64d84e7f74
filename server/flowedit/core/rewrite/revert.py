"""Putting a rewrite's original text back: where it goes once the user has edited around (or inside) the
rewritten region, and what the user is told when it is back. Pure; `RewriteSession.revert` uses them."""

from __future__ import annotations

from flowedit.core.rewrite.events import Reverted
from flowedit.core.text.chunks import Text
from flowedit.core.text.document import off_crlf
from flowedit.core.text.region import Region, nearest


def revert_region(text: Text, region: Region, left: str, original: str) -> tuple[Region, bool]:
    """The region of `text` the original goes back into — `region`, or where the text the rewrite `left`
    is found, nearest first — and whether what the user typed there is dropped (the region holds neither
    the rewrite's text nor the `original`)."""
    # after a conflict the region's ends may fall between a CR and its LF: no LSP position names that
    start = off_crlf(text, region.start)
    region = Region(start, max(start, off_crlf(text, region.end)))
    # what the user did inside is dropped, unless it left the text as the rewrite did or as it was
    # (VS Code's undo, then its redo, of the whole rewrite)
    now = text[region.start : region.end]
    if now != left and now != original:
        # Neovim reports the undo, then the redo, of a whole rewrite as several line changes, through
        # which no region can be followed: the text the rewrite left is looked for, nearest first
        found = nearest(str(text), left, region.start)
        # an occurrence that splits a CR LF pair (the user's line break) is not the rewrite's text
        if found is not None and off_crlf(text, found.start) == found.start \
                and off_crlf(text, found.end) == found.end:
            region, now = found, left
    return region, now != left and now != original


def reverted(dirty: bool) -> Reverted:
    """The event of a finished revert; `dirty`: what the user typed inside the region was dropped."""
    return Reverted("the original text is back" + (
        "; what you typed inside the rewritten region was dropped" if dirty else ""))
