"""A real Emacs 28 + Eglot 1.9 as the editor: `flowedit.rewrite` streams in exactly, `flowedit.revert` puts
the original back at once, and typing above a stream holds it without breaking it.

Path: Eglot ⇄ `flowedit lsp` (stdio, configured through `eglot-server-programs`) ⇄ one WebSocket ⇄
`flowedit serve` (scripted model, 1000 tokens/s). Both tests set only `eglot-confirm-server-initiated-edits`
to nil (else Eglot asks to confirm every streamed edit); every other Eglot setting is its default.
- `emacs --batch` (eglot_rewrite.el) never goes idle, so Eglot's idle timer would never report a change:
  the driver runs that timer itself while it waits for the stream, as an idle Emacs would, and not while
  Eglot's own `flowedit.revert` request is pending, as no Emacs does. The server must answer the revert
  on Eglot's `applied: t` alone (before, it waited 10 s for an echo and failed).
- `emacs -nw` in a pseudo-terminal (eglot_typing.el) goes idle like a user's Emacs. The test types above
  the streaming region: a first key the moment Eglot reports an edit (so the server's next edit names the
  version Eglot has just left, which Eglot refuses: "Edits on ‘file.py’ require version N, you have M"),
  then 24 keys at 80 ms on the terminal, through which Eglot (idle time 0.5 s) reports nothing. Another
  test types in another buffer while the whole rewrite streams: Eglot reports none of it until the user
  pauses, and the stream must not wait for those reports.
Skipped without `emacs` and elpa-eglot (a failure under FLOWEDIT_REQUIRE_EDITORS=1: see tests/editors/emacs.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.editors.emacs import EmacsFiles, EmacsTerminal, emacs_or_skip, run_batch
from tests.editors.nvim import read
from tests.editors.sample import ORIGINAL, TARGET
from tests.lsp.harness import Gateway

RATE = 1000  # tokens/s


def answer(lines: int) -> str:
    """A multi-line, non-ASCII (é, astral 😀, CJK) answer of about 10 tokens a line."""
    return "compute(\n" + "".join(f'    item_{i:03d}="é😀 中文 {i}",\n' for i in range(lines)) + ")"


async def test_eglot_streams_a_rewrite_exactly_and_reverts_it_at_once(tmp_path: Path) -> None:
    emacs = emacs_or_skip()
    files = EmacsFiles(tmp_path)
    files.write(ORIGINAL)
    new = answer(60)  # ≈ 600 tokens: ≈ 0.6 s
    async with Gateway(new, tmp_path, rate=RATE) as gw:
        run = await run_batch(emacs, "eglot_rewrite.el", files, gw.url, TARGET)
    diagnostics = run.diagnostics
    assert run.ok, "the Emacs driver failed" + diagnostics()
    summary = files.summary()
    outcome = summary["outcome"]
    print(f"\nEmacs {summary['emacs']} Eglot {summary['eglot']}: outcome={outcome['outcome']} "
          f"tokens={outcome['tokens']} edits_applied={outcome['edits_applied']} "
          f"applied_by_eglot={summary['applied_while_streaming']} did_change={summary['did_change']} "
          f"rewrite_answered_ms={summary['rewrite_ms']:.0f} revert_ms={summary['revert_ms']:.0f} "
          f"total_ms={summary['total_ms']:.0f}")

    assert outcome["outcome"] == "finished", diagnostics()
    assert summary["streamed"] == ORIGINAL.replace(TARGET, new, 1), diagnostics()
    assert summary["applied_while_streaming"] >= 3, diagnostics()  # it streamed in, not in one edit
    assert summary["refused"] == 0, diagnostics()
    assert summary["did_change"] >= 3, diagnostics()  # Eglot's idle timer reported the edits
    assert summary["revert"]["reverted"] is True, diagnostics()
    assert summary["after_revert"] == ORIGINAL, diagnostics()
    assert read(files.out) == ORIGINAL, diagnostics()
    # the server answered the revert with nothing reported by Eglot, as soon as Eglot had applied it
    assert summary["did_change_during_revert"] == 0, diagnostics()
    assert summary["revert_ms"] < 2000, diagnostics()  # (it waited for the 10 s echo timeout, then failed)


KEYS = 25
KEY_INTERVAL_S = 0.08


async def test_eglot_in_a_terminal_survives_typing_above_the_stream(tmp_path: Path) -> None:
    emacs = emacs_or_skip()
    files = EmacsFiles(tmp_path)
    files.write(ORIGINAL)
    new = answer(400)  # ≈ 4,000 tokens: ≈ 4 s, still streaming when Eglot reports the typing
    async with Gateway(new, tmp_path, rate=RATE) as gw:
        async with EmacsTerminal(emacs, "eglot_typing.el", files, gw.url, TARGET) as term:
            ready = await term.wait_for("ready")
            term.press(b"\x03r")  # C-c r: rewrite the target, then go to the top of the buffer
            await term.wait_for("applied", count=3)  # it streams in, Eglot reporting each edit
            term.press(b"\x03k")  # C-c k: the first key lands as Eglot reports an edit
            first_key = await term.wait_for("typed")
            await term.wait_for("refused")  # the server's next edit named the version Eglot had left
            last_key_at = await term.type(b"k", KEYS - 1, KEY_INTERVAL_S)
            outcome, reverted = await term.outcome_then_revert()
            outcome = outcome["outcome"]
            diagnostics = term.diagnostics
            events = term.events
    summary = files.summary()
    typing = [e for e in events if first_key["t"] <= e["t"] <= last_key_at]
    refused = [e for e in typing if e["event"] == "refused"]
    resumed = next((e["t"] for e in events if e["event"] == "applied" and e["t"] > first_key["t"]), None)
    held_ms = f"{(resumed - first_key['t']) * 1000:.0f}" if resumed else None  # no edit landed meanwhile
    applied_after_typing = [e for e in events if e["event"] == "applied" and e["t"] > last_key_at]
    print(f"\nEmacs {summary['emacs']} Eglot {summary['eglot']} (-nw, idle time {ready['idle_time']} s): "
          f"outcome={outcome['outcome']} tokens={outcome['tokens']} applied_by_eglot={summary['applied']} "
          f"refused={summary['refused']} (while typing {len(refused)}) "
          f"reported_while_typing={sum(e['event'] == 'reported' for e in typing)} "
          f"held_ms={held_ms} "
          f"applied_after_typing={len(applied_after_typing)} "
          f"revert_ms={reverted['ms']:.0f} total_ms={summary['total_ms']:.0f}"
          f"\nfirst refusal: {summary['refusals'][:1]}")

    assert ready["idle_time"] == 0.5  # Eglot's default
    assert not [e for e in events if e["event"] == "outcome" and e["t"] <= last_key_at], \
        "the stream ended before the typing did: the test did not test anything"
    # Eglot refused the edits built for the version it had left ("Edits on ... require version N, you have M")
    assert refused and all("require version" in m for m in summary["refusals"]), await diagnostics()
    assert outcome["outcome"] == "finished", await diagnostics()
    assert len(applied_after_typing) >= 2, await diagnostics()  # the stream went on, edit by edit
    typed = "k" * KEYS  # typed at the top of the buffer
    assert summary["streamed"] == typed + ORIGINAL.replace(TARGET, new, 1), await diagnostics()
    assert reverted["result"]["reverted"] is True, await diagnostics()
    assert read(files.out) == typed + ORIGINAL, await diagnostics()  # the typing outside is kept
    assert reverted["ms"] < 2000, await diagnostics()


async def test_eglot_in_a_terminal_streams_a_whole_rewrite_while_the_user_types_in_another_buffer(
        tmp_path: Path) -> None:
    """Typing anywhere keeps Emacs from going idle, so Eglot reports none of the streamed edits. Before,
    the stream waited for the report of its first edit (and failed at the 10 s echo timeout); now each edit
    Eglot answered `applied: t` is taken as applied (Eglot checks versions, one per edit) and the next one
    follows at once: the rewrite finishes while the user is still typing."""
    emacs = emacs_or_skip()
    files = EmacsFiles(tmp_path)
    files.write(ORIGINAL)
    new = answer(150)  # ≈ 1,500 tokens: ≈ 1.5 s at 1,000 tok/s
    keys = 60  # 4.8 s at 80 ms a key
    async with Gateway(new, tmp_path, rate=RATE) as gw:
        async with EmacsTerminal(emacs, "eglot_typing.el", files, gw.url, TARGET) as term:
            await term.wait_for("ready")
            term.press(b"\x03r")  # C-c r: rewrite the target
            await term.wait_for("applied")
            term.press(b"\x03o")  # C-c o: on to another buffer, typing there
            elsewhere = await term.wait_for("elsewhere")
            last_key_at = await term.type(b"n", keys, KEY_INTERVAL_S)
            outcome, reverted = await term.outcome_then_revert()
            diagnostics = term.diagnostics
            events = term.events
    summary = files.summary()
    typing = [e for e in events if elsewhere["t"] <= e["t"] <= last_key_at]
    applied = [e for e in typing if e["event"] == "applied"]
    print(f"\nEmacs {summary['emacs']} Eglot {summary['eglot']} (-nw), typing in another buffer: "
          f"outcome={outcome['outcome']['outcome']} after {(outcome['t'] - elsewhere['t']) * 1000:.0f} ms "
          f"of typing, applied while typing={len(applied)}, "
          f"reported while typing={sum(e['event'] == 'reported' for e in typing)}, "
          f"revert_ms={reverted['ms']:.0f}")
    assert not [e for e in typing if e["event"] == "reported"], "Eglot reported a change: Emacs went idle"
    assert outcome["t"] < last_key_at, "the rewrite waited for the user to stop typing" + await diagnostics()
    assert outcome["outcome"]["outcome"] == "finished", await diagnostics()
    assert len(applied) >= 3, await diagnostics()
    assert summary["streamed"] == ORIGINAL.replace(TARGET, new, 1), await diagnostics()
    assert reverted["result"]["reverted"] is True, await diagnostics()
    assert read(files.out) == ORIGINAL, await diagnostics()
