"""The embedded engine on a small workspace: completions, FIM, incremental updates, determinism, excludes."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowedit.engines.local import LocalEngine, LocalSettings
from flowedit.engines.local import layers

GREETER = '''\
class Greeter:
    def __init__(self, name):
        self.name = name

    def greet(self):
        return "hello " + self.name


def shout(text):
    return text.upper() + "!"
'''


def make_workspace(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def complete(engine: LocalEngine, prefix: str, suffix: str = "", path: str | None = None, **kw: object) -> str:
    return "".join(engine.complete(prefix, suffix, path, **kw))  # type: ignore[arg-type]


@pytest.fixture
def engine(tmp_path: Path) -> LocalEngine:
    make_workspace(tmp_path, {"greeter.py": GREETER})
    return LocalEngine(LocalSettings(workspace=tmp_path))


def test_completes_from_the_workspace(engine: LocalEngine) -> None:
    assert complete(engine, "def shout(text):\n    return text.") == 'upper() + "!"'
    assert complete(engine, "    def greet(self):\n        return \"hel") == 'lo " + self.name'
    assert engine.index.stats.files == 1 and engine.index.stats.lines == GREETER.count("\n")
    assert "1 file, " in engine.describe() and "refuses rewrites" in engine.describe()


def test_block_completion_stops_at_the_end_of_the_block(engine: LocalEngine) -> None:
    assert complete(engine, "class Greeter:\n    def __init__(self, name):") == "\n        self.name = name"


def test_fim_stops_where_the_suffix_resumes(engine: LocalEngine) -> None:
    prefix = "class Greeter:\n    def __init__(self, name):\n"
    suffix = "        self.name = name\n"
    assert complete(engine, prefix, suffix) == ""  # the next line would only repeat the suffix
    assert complete(engine, "def shout(text):\n    return text.upper(", ') + "!"\n') == ""
    assert complete(engine, "def shout(text):\n    return text.", '() + "!"\n') == "upper"
    assert complete(engine, "def shout(text):\n    return text.upper() + ", "\n") == '"!"'
    assert complete(engine, "def shout(text):\n    return text.upper() + ", '"!"\n') == ""


def test_a_blank_line_s_indentation_is_where_the_completion_starts(tmp_path: Path) -> None:
    nested = "def f(x):\n    if x:\n        y = 1\n    return x\n"
    make_workspace(tmp_path, {f"n{i}.py": nested.replace("y", f"y{i}") for i in range(3)})
    engine = LocalEngine(LocalSettings(workspace=tmp_path))
    # after `if x:` the index only goes on deeper; the cursor's blank line says the code goes on here
    at_four = complete(engine, "def f(x):\n    if x:\n    ", "\n")
    assert at_four and not at_four[0].isspace()
    assert complete(engine, "def f(x):\n    if x:\n        ", "\n").startswith("y")


def test_own_document_is_not_its_own_oracle(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"a.py": "value = compute_the_answer(42)\n"})
    engine = LocalEngine(LocalSettings(workspace=tmp_path))
    path = str(tmp_path / "a.py")
    assert complete(engine, "value = compute_", "", path) == ""  # only its own (replaced) text knew it
    assert complete(engine, "value = compute_", "", None) == "the_answer(42)"
    # ...but what is before the cursor in the same request still teaches
    text = "x = compute_the_answer(42)\nvalue = compute_"
    assert complete(engine, text, "", path) == "the_answer(42)"


def test_an_update_changes_predictions_without_a_rebuild(engine: LocalEngine, tmp_path: Path) -> None:
    static = engine.index._static.shard
    before = complete(engine, "def shout(text):\n    return text.")
    engine.update_document(str(tmp_path / "greeter.py"), GREETER.replace("text.upper()", "text.lower()"))
    assert complete(engine, "def shout(text):\n    return text.") == 'lower() + "!"' != before
    engine.update_document((tmp_path / "other.py").as_uri(), "def whisper(text):\n    return text.casefold()\n")
    assert complete(engine, "def whisper(text):\n    return text.") == "casefold()"
    engine.remove_document(str(tmp_path / "other.py"))
    assert complete(engine, "def whisper(text):\n    return text.") != "casefold()"
    assert engine.index._static.shard is static  # the static shard was never rebuilt


def test_many_updates_compact_and_stay_correct(engine: LocalEngine, tmp_path: Path) -> None:
    for i in range(3 * layers.MAX_LOOSE):
        engine.update_document(str(tmp_path / f"m{i}.py"), f"def helper_{i}(x):\n    return x * {i}\n")
        assert complete(engine, f"def helper_{i}(x):\n    return x") == f" * {i}"
    assert len(engine.index._loose) <= layers.MAX_LOOSE + 1
    engine.update_document(str(tmp_path / "m3.py"), "def helper_3(x):\n    return x - 3\n")
    assert complete(engine, "def helper_3(x):\n    return x") == " - 3"
    engine.remove_document(str(tmp_path / "m5.py"))
    assert complete(engine, "def helper_5(x):\n    return x") != " * 5"


def test_dynamic_vocabulary_is_reset_when_it_grows_too_large(engine: LocalEngine, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layers, "DYNAMIC_VOCAB_LIMIT", 5)
    for i in range(4):
        engine.update_document(str(tmp_path / "typing.py"), f"zz{i} = frobnicate_{i}(1)\n")
        assert complete(engine, f"zz{i} = frob") == f"nicate_{i}(1)"
    assert engine.index.vocab.dynamic_size <= 10


def test_deterministic(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"a.py": GREETER, "b.py": GREETER.replace("name", "label"), "c.py": "x = 1\n"})
    first = LocalEngine(LocalSettings(workspace=tmp_path))
    second = LocalEngine(LocalSettings(workspace=tmp_path))
    prompts = ["    def greet(self):\n        return ", "self.", "class Greeter:\n    def __init__(self, ", "x"]
    for prompt in prompts:
        answers = {complete(first, prompt), complete(first, prompt), complete(second, prompt)}
        assert len(answers) == 1, (prompt, answers)


def test_excluded_and_ignored_files_never_contribute(tmp_path: Path) -> None:
    make_workspace(tmp_path, {
        "app.py": "import os\n",
        "my_secret_config.py": "API_TOKEN = 'sk-by-secret-file'\n",
        "generated/out.py": "API_TOKEN = 'sk-by-gitignore'\n",
        "logs/keep.py": "API_TOKEN = 'sk-kept-negated'\n",
        "logs/drop.py": "API_TOKEN = 'sk-by-logs'\n",
        ".gitignore": "generated/\nlogs/*\n!logs/keep.py\n",
        "node_modules/pkg/index.js": "API_TOKEN = 'sk-by-node-modules'\n",
    })
    engine = LocalEngine(LocalSettings(workspace=tmp_path))
    assert engine.index.stats.files == 2  # app.py and logs/keep.py
    assert complete(engine, "API_TOKEN = 'sk-") == "kept-negated'"
    engine.update_document(str(tmp_path / "logs" / "keep.py"), "import sys\n")
    engine.update_document(str(tmp_path / "my_secret_config.py"), "API_TOKEN = 'sk-typed-secret'\n")
    engine.update_document(str(tmp_path / "generated" / "new.py"), "API_TOKEN = 'sk-typed-ignored'\n")
    engine.update_document(str(tmp_path / ".env.local"), "API_TOKEN = 'sk-typed-in-dotenv'\n")
    assert complete(engine, "API_TOKEN = 'sk-") == ""
    engine.update_document(str(tmp_path / "Makefile"), "API_TOKEN = 'sk-allowed'\n")  # any open text file counts
    assert complete(engine, "API_TOKEN = 'sk-") == "allowed'"


KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
       "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
       "-----END OPENSSH PRIVATE KEY-----\n")


def test_a_file_holding_a_private_key_never_contributes(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"app.py": "import os\n", "fixtures.py": KEY + "API_TOKEN = 'sk-from-disk'\n"})
    engine = LocalEngine(LocalSettings(workspace=tmp_path))
    assert engine.index.stats.files == 1 and complete(engine, "API_TOKEN = 'sk-") == ""
    engine.update_document(str(tmp_path / "notes.py"), "API_TOKEN = 'sk-open'\n")
    assert complete(engine, "API_TOKEN = 'sk-") == "open'"
    engine.update_document(str(tmp_path / "notes.py"), KEY + "API_TOKEN = 'sk-open'\n")  # pasted in
    assert complete(engine, "API_TOKEN = 'sk-") == ""


def test_new_excludes_drop_what_they_rule_out_at_once(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"app.py": "import os\n", "conf/prod.py": "API_TOKEN = 'sk-prod-on-disk'\n"})
    engine = LocalEngine(LocalSettings(workspace=tmp_path))
    engine.update_document(str(tmp_path / "conf" / "staging.py"), "STAGING_TOKEN = 'sk-staging-open'\n")
    assert complete(engine, "API_TOKEN = 'sk-") == "prod-on-disk'"
    assert complete(engine, "STAGING_TOKEN = 'sk-") == "staging-open'"
    assert engine.set_exclude(engine.settings.exclude) == 0  # the same globs: nothing happens
    assert engine.set_exclude([*engine.settings.exclude, "conf"]) == 2
    assert complete(engine, "API_TOKEN = 'sk-") == "" and complete(engine, "STAGING_TOKEN = 'sk-") == ""
    engine.update_document(str(tmp_path / "conf" / "staging.py"), "STAGING_TOKEN = 'sk-staging-open'\n")
    assert complete(engine, "STAGING_TOKEN = 'sk-") == ""  # the new globs hold for what comes later too
    assert engine.index.paths() == [str((tmp_path / "app.py").resolve())]


def test_corpus_and_budget(tmp_path: Path) -> None:
    corpus = make_workspace(tmp_path / "corpus", {f"lib{i}.py": f"def lib_{i}():\n    return {i}\n" for i in range(5)})
    engine = LocalEngine(LocalSettings(corpus=(corpus,)))
    assert engine.index.stats.files == 5 and not engine.index.stats.budget_reached
    assert complete(engine, "def lib_3():\n    return") == " 3"
    small = LocalEngine(LocalSettings(corpus=(corpus,), index_budget_tokens=30))
    assert small.index.stats.files < 5 and small.index.stats.budget_reached
    assert "budget reached" in small.describe()
    with pytest.raises(ValueError, match="not a directory"):
        LocalEngine(LocalSettings(corpus=(tmp_path / "missing",)))


def test_max_tokens_and_an_empty_index(tmp_path: Path) -> None:
    engine = LocalEngine(LocalSettings(workspace=make_workspace(tmp_path, {"a.py": GREETER})))
    assert complete(engine, "class Greeter:\n    def __init__(self, name):", max_tokens=3) == "\n        self"
    empty = LocalEngine()
    assert complete(empty, "") == "" and complete(empty, "def f(") == ""
    assert complete(empty, "alpha = 1\nbeta = alpha + 1\ngamma = al") == "pha + 1"


def test_a_lookup_ends_at_its_deadline_with_what_it_has(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"greeter.py": GREETER})
    prompt = "def shout(text):\n    return text."
    whole = complete(LocalEngine(LocalSettings(workspace=tmp_path)), prompt)
    hurried = LocalEngine(LocalSettings(workspace=tmp_path, deadline_ms=1e-6))  # over after the first token
    assert whole == 'upper() + "!"'
    cut = complete(hurried, prompt)
    # it stopped after its first token; the stop rules drop a line they could not finish
    assert cut != whole and whole.startswith(cut)


def test_the_index_build_tells_its_progress(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"a.py": GREETER, "b.py": "x = 1\n"})
    told: list[tuple[int, int]] = []
    engine = LocalEngine(LocalSettings(workspace=tmp_path), progress=lambda files, tokens: told.append((files, tokens)))
    assert [files for files, _ in told] == [1, 2]
    assert told[-1][1] == engine.index.stats.tokens


async def _next_edit(engine: LocalEngine, **ext: object) -> str:
    from flowedit.model import wire

    request = wire.ResponseCreate(input="", flowedit={"task": "next_edit", "path": "app.py", "before": "", "after": "",
                                                      **ext})
    return "".join([piece async for piece in engine.stream(request)])


async def test_a_next_edit_repeats_the_last_edit_else_continues_the_line_being_written(engine: LocalEngine) -> None:
    region = "def shout(text, times):\n    loud = text.upper()\n    return text.upper() + '!'\n"
    renamed = await _next_edit(engine, region=region.replace("text, times", "words, times"), cursor=10,
                               last_edit={"old": "def shout(text, times):", "new": "def shout(words, times):"})
    assert renamed == "def shout(words, times):\n    loud = words.upper()\n    return words.upper() + '!'\n"
    # an edit that recurs nowhere, leaving the cursor at the end of a line it was writing: the ∞-gram goes on
    writing = "def shout(text):\n    return text.\n"
    continued = await _next_edit(engine, region=writing, cursor=writing.index(".\n") + 1,
                                 last_edit={"old": "    return text", "new": "    return text."})
    assert continued == "def shout(text):\n    return text.upper() + \"!\"\n"
    # the cursor before text of its line (not writing at its end): no prediction
    assert await _next_edit(engine, region=writing, cursor=writing.index("text."),
                            last_edit={"old": "    return text", "new": "    return text."}) == ""
