"""The `workspace/executeCommand` handlers of rewrites (start, interrupt, redirect, continue, revert) and of
next edits (accept, dismiss, accepted as ghost text), the setup check, and `flowedit/cursor`: thin glue over
the features.

What they need is imported when they run (the server answers `initialize` without it). `ls` is the
`FloweditServer`, left unannotated: pygls reads a command handler's type hints when it runs.
"""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from flowedit.core import names
from flowedit.lsp import convert


def register(server: Any) -> None:
    """Add the handlers to `server` (a `FloweditServer` being built)."""
    _register_rewrite_start_stop(server)
    _register_rewrite_follow_ups(server)
    _register_next_edits(server)
    _register_reviews(server)
    _register_setup_check(server)


def _register_rewrite_start_stop(server: Any) -> None:
    """Start a rewrite, interrupt rewrites."""

    @server.command(names.REWRITE)
    async def rewrite(ls, *args: Any) -> dict[str, Any]:
        from flowedit.lsp.arguments import RewriteArgs, parse
        from flowedit.lsp.rewrite.driver import RewriteRefused

        a: RewriteArgs = parse(RewriteArgs, args)
        try:
            run = await ls.rewrites.request(a.uri, a.range.lsp(), a.instruction, a.mode, a.version)
        except RewriteRefused as exc:
            ls.show_warning(f"FlowEdit: {exc}")
            raise JsonRpcInvalidParams(str(exc), data={"shown": True}) from None  # the client says no more
        run.told.clear()  # (its tasks have not run yet: they wait for this answer to be out)
        ls.after_answer(run.told.set, ls.habits.answer_gap_s)
        return {"id": run.id, "mode": run.session.mode.value}

    @server.command(names.INTERRUPT)
    async def interrupt(ls, *args: Any) -> list[dict[str, Any]]:
        from flowedit.lsp.arguments import InterruptArgs, parse

        a: InterruptArgs = parse(InterruptArgs, args)
        runs = ls.rewrites.matching(a.id, a.uri)
        reviews = ls.reviews.matching(a.id, a.uri)  # (a review stops too; what it showed stays)
        if a.id is not None and not runs and not reviews:
            raise JsonRpcInvalidParams(f"no rewrite or review with id {a.id!r}")
        return [await ls.rewrites.interrupt(r) for r in runs] + [await ls.reviews.interrupt(j) for j in reviews]


def _register_rewrite_follow_ups(server: Any) -> None:
    """What follows a rewrite: redirect it (a new instruction), continue it once stopped, revert it."""

    @server.command(names.REDIRECT)
    async def redirect(ls, *args: Any) -> dict[str, Any]:
        from flowedit.lsp.arguments import RedirectArgs, parse
        from flowedit.lsp.rewrite.driver import RewriteRefused

        a: RedirectArgs = parse(RedirectArgs, args)
        run = ls.rewrites.runs.get(a.id)
        if run is None:
            raise JsonRpcInvalidParams(f"no rewrite with id {a.id!r}")
        try:
            return await ls.rewrites.redirect(run, a.instruction)
        except RewriteRefused as exc:
            raise JsonRpcInvalidParams(str(exc)) from None

    @server.command(names.CONTINUE)
    async def continue_rewrite(ls, *args: Any) -> dict[str, Any]:
        from flowedit.lsp.arguments import ContinueArgs, parse
        from flowedit.lsp.rewrite.driver import RewriteRefused

        a: ContinueArgs = parse(ContinueArgs, args)
        run = ls.rewrites.runs.get(a.id or "") or ls.rewrites.last_by_uri.get(a.uri or "")
        try:
            if run is None:
                raise RewriteRefused(f"no rewrite {a.id or 'in ' + str(a.uri)} to continue")
            return await ls.rewrites.resume(run)
        except RewriteRefused as exc:
            ls.show_warning(f"FlowEdit: {exc}")
            raise JsonRpcInvalidParams(str(exc), data={"shown": True}) from None

    @server.command(names.REVERT)
    async def revert(ls, *args: Any) -> dict[str, Any]:
        from flowedit.lsp.arguments import RevertArgs, parse

        result = await ls.rewrites.revert(parse(RevertArgs, args).uri)
        if not result["reverted"]:
            ls.show_warning(f"FlowEdit cannot revert: {result['reason']}")
        elif result.get("dropped_typing"):
            ls.show_warning(f"FlowEdit: {result['reason']}")  # say plainly what the revert did not keep
        return result


def _register_next_edits(server: Any) -> None:
    """Accept, dismiss, accepted as ghost text, and where the cursor went (`flowedit/cursor`)."""

    @server.command(names.ACCEPT_NEXT_EDIT)
    async def accept_next_edit(ls, *args: Any) -> dict[str, Any]:
        from flowedit.lsp.arguments import NextEditArgs, parse

        a: NextEditArgs = parse(NextEditArgs, args)
        result = await ls.next_edits.accept(a.uri, a.id)
        if not result["applied"]:
            ls.show_warning(f"FlowEdit: {result['reason']}")
        return result

    @server.command(names.DISMISS_NEXT_EDIT)
    def dismiss_next_edit(ls, *args: Any) -> dict[str, bool]:
        from flowedit.lsp.arguments import NextEditArgs, parse

        a: NextEditArgs = parse(NextEditArgs, args)
        return {"dismissed": ls.next_edits.dismiss(a.uri, a.id)}

    @server.command(names.NEXT_EDIT_ACCEPTED)
    def next_edit_accepted(ls, *args: Any) -> None:
        from flowedit.lsp.arguments import NextEditArgs, parse

        a: NextEditArgs = parse(NextEditArgs, args)
        ls.next_edits.accepted_inline(a.uri, a.id)

    @server.feature(names.CURSOR)
    def cursor(ls, params: Any) -> None:
        from flowedit.core.plain import plain
        from flowedit.lsp.arguments import CursorParams, parse

        p: CursorParams = parse(CursorParams, (plain(params),))
        doc = ls.docs.get(p.uri)
        if doc is not None and not doc.unsafe:
            offset = doc.offset_at(convert.position(p.lsp()), ls.encoding)
            ls.next_edits.cursor_moved(p.uri, offset)
            # the user looks at this place (a document that got focus, a jump): once the cursor rests, warm
            # the model with the context there (at most once until the user types: lsp/inline/warming.py)
            ls.completer.warming.rests_at(p.uri, offset)


def _register_reviews(server: Any) -> None:
    """Start a review; apply a finding's fix (or every fix of a document); dismiss a finding."""

    @server.command(names.REVIEW)
    async def review(ls, *args: Any) -> dict[str, Any]:
        from flowedit.lsp.arguments import ReviewArgs, parse
        from flowedit.lsp.review.targets import ReviewRefused

        a: ReviewArgs = parse(ReviewArgs, args)
        try:
            job = ls.reviews.request(a.uri, a.range.lsp() if a.range else None, a.chosen_scope(), a.instruction)
        except ReviewRefused as exc:
            ls.show_warning(f"FlowEdit: {exc}")
            raise JsonRpcInvalidParams(str(exc), data={"shown": True}) from None
        job.told.clear()  # (its progress waits for this answer to be out)
        ls.after_answer(job.told.set, ls.habits.answer_gap_s)
        return {"id": job.id, "scope": job.scope}

    @server.command(names.APPLY_REVIEW_FIX)
    async def apply_review_fix(ls, *args: Any) -> dict[str, Any]:
        from flowedit.lsp.arguments import FindingArgs, parse

        a: FindingArgs = parse(FindingArgs, args)
        result = await ls.reviews.apply_fix(a.uri, a.id)
        if not result["applied"]:
            ls.show_warning(f"FlowEdit: {result['reason']}")
        return result

    @server.command(names.DISMISS_FINDING)
    def dismiss_finding(ls, *args: Any) -> dict[str, bool]:
        from flowedit.lsp.arguments import FindingArgs, parse

        a: FindingArgs = parse(FindingArgs, args)
        if a.id is None:
            raise JsonRpcInvalidParams("id: the finding to dismiss")
        return {"dismissed": ls.reviews.dismiss(a.uri, a.id)}


def _register_setup_check(server: Any) -> None:
    """flowedit.checkSetup: the setup checked end to end."""

    @server.command(names.CHECK_SETUP)
    async def check_setup(ls, *args: Any) -> dict[str, Any]:
        """The setup checked end to end (lsp/checkup.py): the report, its text in the log, and one message
        (a warning with each problem, else that there is none) for editors that show nothing else."""
        import logging

        from lsprotocol import types as lsp

        from flowedit.lsp.checkup import check_setup as check

        report = await check(ls)
        logging.getLogger("flowedit.lsp.checkup").info("%s", report["text"])
        ls.window_show_message(lsp.ShowMessageParams(
            type=lsp.MessageType.Info if report["ok"] else lsp.MessageType.Warning, message=report["summary"]))
        return report
