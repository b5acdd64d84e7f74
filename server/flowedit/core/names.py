"""The names flowedit's server and the editors address each other by, each defined once: the LSP methods of
flowedit's own (and the Copilot-shaped ones it answers), the commands the server runs
(`workspace/executeCommand`), and the VS Code extension's own commands, which no server command may take.

Pure data in the core so that both sides of the wire read it: the server (lsp/) and the editor stand-in
(editor_standin/, which may import only the core). tests/test_command_names.py checks that the server
registers exactly these and that the editors' packages (client-vscode/, editors/) use no other name.
"""

from __future__ import annotations

# methods, server -> client
STATUS = "flowedit/status"  # the link's state and the counters (notification)
NEXT_EDIT = "flowedit/nextEdit"  # a next edit to show, or that the shown one is gone (notification)
APPLY_REWRITE_EDIT = "flowedit/applyRewriteEdit"  # workspace/applyEdit plus the rewrite's id (request)
# methods, client -> server (notifications, but for the inline edit request)
CURSOR = "flowedit/cursor"  # where the cursor went: a document that got focus, a jump to another line
COPILOT_INLINE_EDIT = "textDocument/copilotInlineEdit"  # Copilot's next-edit request (lsp/nextedit/copilot.py)
INLINE_EDIT_SHOWN = "textDocument/didShowInlineEdit"
FOCUS = "textDocument/didFocus"  # Copilot's clients say which document has focus
COMPLETION_PARTIALLY_ACCEPTED = "textDocument/didPartiallyAcceptCompletion"  # Copilot's name and shape
COMPLETION_SHOWN = "textDocument/didShowCompletion"
DISMISSED = "flowedit/dismissed"  # the user dismissed the ghost text shown (Escape): {item} (docs/protocol.md §5)

SERVER_METHODS = frozenset({STATUS, NEXT_EDIT, APPLY_REWRITE_EDIT})
CLIENT_METHODS = frozenset({CURSOR, COPILOT_INLINE_EDIT, INLINE_EDIT_SHOWN, FOCUS, COMPLETION_PARTIALLY_ACCEPTED,
                            COMPLETION_SHOWN, DISMISSED})
METHODS = SERVER_METHODS | CLIENT_METHODS

# commands the server runs
REWRITE = "flowedit.rewrite"
INTERRUPT = "flowedit.interrupt"
REDIRECT = "flowedit.redirect"
CONTINUE = "flowedit.continue"
REVERT = "flowedit.revert"
ACCEPT_NEXT_EDIT = "flowedit.acceptNextEdit"
DISMISS_NEXT_EDIT = "flowedit.dismissNextEdit"
NEXT_EDIT_ACCEPTED = "flowedit.nextEditAccepted"  # a next edit taken as ghost text (the item's command)
COMPLETION_ACCEPTED = "flowedit.completionAccepted"  # an inline completion taken (the item's command)
CHECK_SETUP = "flowedit.checkSetup"
STATS = "flowedit.stats"  # what a long day left behind (bench/soak.py reads it)
REVIEW = "flowedit.review"  # review a selection, a file, its uncommitted changes, or every changed file
APPLY_REVIEW_FIX = "flowedit.applyReviewFix"  # a finding's fix (`id`), or every fix in the document (no `id`)
DISMISS_FINDING = "flowedit.dismissFinding"  # a finding goes, and stays gone on the same code

COMMANDS = frozenset({REWRITE, INTERRUPT, REDIRECT, CONTINUE, REVERT, ACCEPT_NEXT_EDIT, DISMISS_NEXT_EDIT,
                      NEXT_EDIT_ACCEPTED, COMPLETION_ACCEPTED, CHECK_SETUP, STATS, REVIEW, APPLY_REVIEW_FIX,
                      DISMISS_FINDING})

# the VS Code extension's own commands (client-vscode/package.json): VS Code's language client registers
# every server command as a VS Code command, so a name in both sets stops the client from starting
VSCODE_COMMANDS = frozenset({
    "flowedit.rewriteSelection", "flowedit.interruptRewrite", "flowedit.redirectRewrite", "flowedit.continueRewrite",
    "flowedit.revertLastRewrite", "flowedit.setApiKey", "flowedit.clearApiKey", "flowedit.restartServer",
    "flowedit.showLog", "flowedit.checkSetupReport", "flowedit.acceptNextWord", "flowedit.acceptNextLine",
    "flowedit.nextEdit.tab", "flowedit.nextEdit.dismiss", "flowedit.dismissInline",
    "flowedit.reviewSelection", "flowedit.reviewFile", "flowedit.reviewChanges",
})
