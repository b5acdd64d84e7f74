"""What the embedded engine reads from a hostile workspace: never a file outside its roots, whatever the
link; never a credential; only regular files of bounded size, without blocking and without dying."""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

import pytest
from websockets.asyncio.client import connect

from flowedit.engines.local import LocalEngine, LocalSettings

from test_local_gateway import LISTENING, SOURCE, TIMEOUT, exchange, text_of

GH_TOKEN = "gho_" + "R3alT0kenOfTheUser7x9QkWm2Lp4Zs8Vn1Bc6"  # credential-shaped (GitHub OAuth)
OLD_TOKEN = "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"  # 40 hex: what older gh versions stored; no shape
AWS_ID, AWS_SECRET = "AKIA" + "Q7X2M4N6P8R0T3V5", "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY9"
SECRETS = (GH_TOKEN, OLD_TOKEN, AWS_ID, AWS_SECRET, "ghp_", "oauth_token: 3f9a")
PROMPTS = ("oauth_token: ", "    oauth_token: ", "oauth_token: g", "oauth_token: 3", "aws_access_key_id = ",
           "aws_secret_access_key = ", "github.com:\n    oauth_token:")


def complete(engine: LocalEngine, prefix: str, **kw: object) -> str:
    return "".join(engine.complete(prefix, "", None, max_tokens=32, **kw))  # type: ignore[arg-type]


def suggested_secrets(engine: LocalEngine, **kw: object) -> list[str]:
    shown = [prompt + complete(engine, prompt, **kw) for prompt in PROMPTS]
    return [secret for secret in SECRETS if any(secret in text for text in shown)]


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A repository whose links lead to the user's credentials (outside it) and to a folder outside it."""
    home, repo = tmp_path / "home", tmp_path / "repo"
    files = {
        home / ".config/gh/hosts.yml": f"github.com:\n    oauth_token: {GH_TOKEN}\n    user: someone\n",
        home / ".aws/credentials": f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n",
        home / "old/hosts.yml": f"github.com:\n    oauth_token: {OLD_TOKEN}\n    user: someone\n",
        repo / "app.py": "import os\n",
        repo / "config.yml": "github.com:\n    user: someone\n    git_protocol: https\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (repo / "notes.yml").symlink_to(home / ".config/gh/hosts.yml")
    (repo / "boto.cfg").symlink_to(home / ".aws/credentials")
    (repo / "old.yml").symlink_to(home / "old/hosts.yml")
    (repo / "up.yml").symlink_to("../home/old/hosts.yml")  # relative, out through ..
    (repo / "settings").symlink_to(home / "old", target_is_directory=True)
    (repo / "inner.yml").symlink_to(repo / "config.yml")  # a link that stays inside: the same file, once
    return repo


def test_files_outside_the_workspace_are_never_read_whatever_the_link(linked: Path) -> None:
    engine = LocalEngine(LocalSettings(workspace=linked))
    assert engine.index.paths() == sorted(str((linked / n).resolve()) for n in ("app.py", "config.yml"))
    assert suggested_secrets(engine) == []
    assert "left out: 4 links out of the workspace)" in engine.describe()


def test_a_document_opened_through_a_link_out_of_the_workspace_is_not_learnt(linked: Path) -> None:
    engine = LocalEngine(LocalSettings(workspace=linked))
    hosts = (linked / "notes.yml").read_text(encoding="utf-8")  # what an editor shows and sends
    old = (linked / "old.yml").read_text(encoding="utf-8")
    engine.update_document(str(linked / "notes.yml"), hosts)
    engine.update_document((linked / "settings" / "hosts.yml").as_uri(), old)
    assert suggested_secrets(engine) == []
    # ...nor when it comes with a request as a snippet of another open document
    snippets = ((str(linked / "notes.yml"), hosts), (str(linked / "settings" / "hosts.yml"), old))
    assert suggested_secrets(engine, snippets=snippets) == []
    # a document outside the workspace opened by its own path (another project) is still the user's to learn
    engine.update_document(str(linked.parent / "elsewhere" / "lib.py"), "def elsewhere_helper():\n    pass\n")
    assert complete(engine, "def elsewhere_") == "helper():"


def test_a_corpus_folder_may_be_linked_to(tmp_path: Path) -> None:
    corpus, repo = tmp_path / "corpus", tmp_path / "repo"
    corpus.mkdir(), repo.mkdir()
    (corpus / "lib.py").write_text("def corpus_helper():\n    pass\n", encoding="utf-8")
    (repo / "lib.py").symlink_to(corpus / "lib.py")
    engine = LocalEngine(LocalSettings(workspace=repo, corpus=(corpus,)))
    assert engine.index.paths() == [str((corpus / "lib.py").resolve())]


def test_tokens_in_the_workspace_are_withheld_like_private_keys(tmp_path: Path) -> None:
    """Credential-shaped values (the redactor's patterns) in files of the workspace itself."""
    (tmp_path / "app.py").write_text("import os\n", encoding="utf-8")
    (tmp_path / "hosts.yml").write_text(f"github.com:\n    oauth_token: {GH_TOKEN}\n", encoding="utf-8")
    (tmp_path / "deploy.py").write_text(f"AWS_KEY_ID = '{AWS_ID}'\nREGION = 'eu-west-1'\n", encoding="utf-8")
    engine = LocalEngine(LocalSettings(workspace=tmp_path))
    assert engine.index.paths() == [str((tmp_path / "app.py").resolve())]
    assert suggested_secrets(engine) == []
    assert "left out: 2 files holding a credential)" in engine.describe()
    engine.update_document(str(tmp_path / "ci.yml"), f"oauth_token: ghp_{GH_TOKEN[4:]}\n")  # typed or pasted
    assert suggested_secrets(engine) == [] and engine.index.paths() == [str((tmp_path / "app.py").resolve())]
    assert suggested_secrets(engine, snippets=((str(tmp_path / "ci.yml"), f"oauth_token: {GH_TOKEN}\n"),)) == []


# ------------------------------------------------------------------ special and huge files, through the gateway

MEMORY_LIMIT = 1 << 30  # the gateway's process, so that reading /dev/zero ends in MemoryError, not in the OOM killer


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@asynccontextmanager
async def serve_local(workspace: Path) -> AsyncIterator[Callable[[str], Awaitable[str]]]:
    """`flowedit serve --engine local` over `workspace` (memory-limited); yields `complete(prefix)`."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "flowedit.cli", "serve", "--engine", "local", "--workspace", str(workspace),
        "--port", "0", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, preexec_fn=_limit_memory)
    try:
        async with asyncio.timeout(TIMEOUT):
            line = (await proc.stdout.readline()).decode()  # type: ignore[union-attr]
        match = LISTENING.fullmatch(line)
        if match is None:
            proc.kill()
            _, stderr = await proc.communicate()
            pytest.fail(f"the gateway did not start: {line!r}\n{stderr.decode()[-2000:]}")
        async with connect(match.group(1), proxy=None) as ws:

            async def complete(prefix: str) -> str:
                fim = {"task": "complete", "prefix": prefix, "suffix": "\n", "path": str(workspace / "new.py")}
                return text_of(await exchange(ws, flowedit=fim))

            yield complete
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(TIMEOUT):
            await proc.communicate()
        assert proc.returncode == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _sparse(path: Path) -> None:
    with open(path, "wb") as f:
        f.truncate(2 << 30)  # 2 GB that takes no disk


HOSTILE: dict[str, Callable[[Path], None]] = {
    "a link to /dev/zero": lambda ws: (ws / "zero.py").symlink_to("/dev/zero"),
    "a FIFO": lambda ws: _fifo(ws / "pipe.py"),
    "a 2 GB file": lambda ws: _sparse(ws / "big.py"),
    "a .gitignore linked to /dev/zero": lambda ws: (ws / ".gitignore").symlink_to("/dev/zero"),
    "a FIFO as .gitignore": lambda ws: _fifo(ws / ".gitignore"),
    "a 2 GB .gitignore": lambda ws: _sparse(ws / ".gitignore"),
    "a backtracking .gitignore pattern": lambda ws: (
        (ws / ".gitignore").write_text("*a*a*a*a*a*a*a*a*b.py\n", encoding="utf-8"),
        (ws / ("a" * 200 + ".py")).write_text("x = 1\n", encoding="utf-8")),  # hours per check in pathspec's regex
}


@pytest.fixture
def unblock_fifos(tmp_path: Path):
    """A reader stuck opening one of the test's FIFOs (the code under test, if it blocks) is let go at the end."""
    yield
    for fifo in tmp_path.rglob("*"):
        if fifo.is_fifo():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # no reader waiting


@pytest.mark.parametrize("hostile", list(HOSTILE), ids=list(HOSTILE))
async def test_special_and_huge_files_are_skipped_and_the_engine_lives(tmp_path: Path, hostile: str,
                                                                      unblock_fifos: None) -> None:
    (tmp_path / "geometry.py").write_text(SOURCE, encoding="utf-8")
    HOSTILE[hostile](tmp_path)
    async with serve_local(tmp_path) as complete:
        assert await complete("def area(width, height):\n    return wi") == "dth * height"


def test_only_regular_files_are_opened_and_never_through_a_link(tmp_path: Path, unblock_fifos: None) -> None:
    from flowedit.engines.local.sources import read_text

    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    _fifo(tmp_path / "pipe.py")
    _sparse(tmp_path / "big.py")
    names, read = ("a.py", "link.py", "pipe.py", "big.py"), {}
    reader = threading.Thread(target=lambda: read.update({n: read_text(str(tmp_path / n)) for n in names}),
                              daemon=True)
    reader.start()
    reader.join(TIMEOUT)  # a guard: a reader that opened the FIFO would wait for a writer forever
    assert not reader.is_alive(), "read_text blocked (on the FIFO)"
    # a link is not read through (its real path is checked and read instead): a file is read as what it is
    assert read == {"a.py": "x = 1\n", "link.py": None, "pipe.py": None, "big.py": None}
