"""Secrets never leave: the real server over stdio, a workspace full of credential files (on disk and opened
in the editor), and a record of everything a model endpoint received and everything the embedded engine
suggested. Each file holds a line the engine could learn (`leak_N = "SECRETMARK_N"`); a control file
that is not a secret holds the same kind of line, and its marker does get out — the test can see a leak.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flowedit.core.exclude import holds_private_key
from flowedit.editor_standin.client import EditorClient
from flowedit.engines.gateway import Gateway

from tests.lsp.harness import Recording

KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKjMzEfYyjiWA4R4"
PRIVATE_KEY = f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\n{KEY_BODY[::-1]}\n-----END PRIVATE KEY-----\n"
# every file the default excludes or the private-key rule keep from models (path in the workspace)
SECRET_FILES = [
    ".ssh/id_ed25519", ".ssh/id_ecdsa", "keys/id_ed25519", "keys/id_ecdsa_sk", ".ssh/config", ".netrc", ".npmrc",
    ".pypirc", "certs/client.p12", "certs/client.pfx", ".kube/config", ".aws/credentials", ".aws/config",
    ".docker/config.json", "android/release.keystore", "server/app.jks", ".git-credentials", "deploy_notes.py",
]
CONTROL = "public_notes.cfg"  # not a secret: its marker is learned and suggested, or the test sees nothing


def secret_text(i: int, name: str) -> str:
    key = PRIVATE_KEY if name == "deploy_notes.py" else ""  # excluded by its content alone
    return f"{key}leak_{i} = \"SECRETMARK_{i}\"\n"


def write_workspace(root: Path) -> dict[str, str]:
    """The secret files and the control on disk; uri → text."""
    files = {name: secret_text(i, name) for i, name in enumerate(SECRET_FILES)}
    files[CONTROL] = 'leak_control = "CONTROLMARK"\n'
    out = {}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out[path.as_uri()] = text
    assert holds_private_key(files["deploy_notes.py"]) and not holds_private_key(files[CONTROL])
    return out


def leaked(texts: list[str]) -> list[str]:
    """The secret markers and key pieces found in `texts`."""
    everything = "\n".join(texts)
    markers = [f"SECRETMARK_{i}" for i in range(len(SECRET_FILES))] + ["FLIPMARK", KEY_BODY[:24]]
    return [m for m in markers if m in everything]


async def test_an_endpoint_never_receives_a_secret_file(tmp_path):
    files = write_workspace(tmp_path)
    engine = Recording("pass", rate=0)

    def received() -> list[str]:
        """Every request the model endpoint received, whole."""
        return [r.model_dump_json() for r in engine.requests]

    # no speculative requests nor next edits: this test counts what reaches the model one request at a time
    settings = {"model": "m", "inline": {"speculate": False}, "next_edit": {"enabled": False}}
    async with Gateway(engine) as gateway, \
            EditorClient({**settings, "endpoint": gateway.url}, root_uri=tmp_path.as_uri()) as editor:
        refused = answered = 0
        for uri, text in files.items():
            editor.open(uri, text)
            answer = await editor.inline(uri, len(text) - 2, invoked=True)  # inside the marker's quotes
            answered += answer.text is not None
            try:
                await editor.rewrite(uri, 0, len(text) - 1, instruction="tidy")
            except Exception as exc:  # noqa: BLE001 - the server refuses: an error reply
                refused += "never sent to a model" in str(exc)
        assert answered == 1 and refused == len(SECRET_FILES)  # only the control was sent
        assert sum("CONTROLMARK" in r for r in received()) == 2  # its completion and its rewrite

        # a file that turns secret while open: its snippet went along with completions, then no more
        notes, app = (tmp_path / "notes.py").as_uri(), (tmp_path / "app.py").as_uri()
        editor.open(notes, 'leak_flip = "FLIPMARK"\n')
        editor.open(app, "value = 1\n")
        editor.type(notes, 0, 0, "# notes\n")  # the user worked there: a neighbour snippet now
        await editor.inline(app, len("value = 1"), invoked=True)
        assert "FLIPMARK" in received()[-1]
        sent = len(received())
        editor.type(notes, 0, 0, PRIVATE_KEY)  # pasted
        editor.type(app, 0, 0, "# after the paste\n")
        await editor.inline(app, len("# after the paste\nvalue = 1"), invoked=True)
        assert len(received()) == sent + 1  # the model was asked, without the neighbour
        assert "FLIPMARK" not in received()[-1]
        assert (await editor.inline(notes, len(PRIVATE_KEY) + len("# notes"), invoked=True)).text is None
        assert len(received()) == sent + 1
    # everything but the one request that carried the snippet before the file turned secret
    assert leaked(received()[: sent - 1] + received()[sent:]) == []


async def test_the_embedded_engine_never_learns_or_suggests_a_secret_file(tmp_path):
    files = write_workspace(tmp_path)
    app = (tmp_path / "app.py").as_uri()
    suggested = []

    async def complete_at_end(editor: EditorClient, line: str) -> str:
        text = editor.text(app)
        editor.type(app, len(text), len(text), line)
        answer = await editor.inline(app, len(text) + len(line), invoked=True)
        suggested.append(answer.text or "")
        return answer.text or ""

    async with EditorClient({}, env={**os.environ, "FLOWEDIT_ENDPOINT": ""}, root_uri=tmp_path.as_uri()) as editor:
        editor.open(app, "import os\n")
        for uri, text in files.items():  # opened too: an editor may open any file
            editor.open(uri, text)
        for i in range(len(SECRET_FILES)):
            await complete_at_end(editor, f'\nleak_{i} = "')
        assert "CONTROLMARK" in await complete_at_end(editor, '\nleak_control = "')  # a leak would show

        # a file that turns secret while open: learned and suggested before, forgotten at once after,
        # cached suggestions included
        notes = (tmp_path / "notes.py").as_uri()
        editor.open(notes, 'leak_flip = "FLIPMARK"\n')
        assert "FLIPMARK" in await complete_at_end(editor, '\nleak_flip = "')
        line_end = len(editor.text(app))
        editor.type(notes, 0, 0, PRIVATE_KEY)
        again = await editor.inline(app, line_end, invoked=True)  # the same place: a cache hit before
        assert "FLIPMARK" not in (again.text or "")
        suggested.append(again.text or "")
    assert leaked(suggested[:-2] + suggested[-1:]) == []
