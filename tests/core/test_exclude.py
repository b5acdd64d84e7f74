"""Which documents never reach a model: URIs to paths, and the exclude globs."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.exclude import DEFAULT_EXCLUDES, excluded_by, uri_path


# ---------------------------------------------------------------------------------------------- uri_path
@pytest.mark.parametrize(("uri", "path"), [
    ("file:///home/me/app.py", "/home/me/app.py"),
    ("file:///home/me/My%20Project/app.py", "/home/me/My Project/app.py"),
    ("file:///home/me/%E4%B8%AD%E6%96%87/%F0%9F%98%80.py", "/home/me/中文/😀.py"),
    ("file:///c%3A/Users/me/app.py", "/c:/Users/me/app.py"),  # VS Code on Windows escapes the drive's colon
    ("file:///C:/Users/me/app.py", "/C:/Users/me/app.py"),  # Neovim on Windows does not
    ("file://server/share/app.py", "/share/app.py"),  # a UNC path: the host is not part of the path
    ("file:///home/me/a%23b%3F.py", "/home/me/a#b?.py"),
    ("file:///home/me/app.py?query#fragment", "/home/me/app.py"),
    ("file:///home/me/x;secret.txt", "/home/me/x;secret.txt"),  # Neovim leaves ';' unescaped
    ("untitled:Untitled-1", "Untitled-1"),
    ("/home/me/app.py", "/home/me/app.py"),  # a plain path comes back as it is, '%' and all
    ("/home/me/100%25.py", "/home/me/100%25.py"),
    ("relative/app.py", "relative/app.py"),
    ("C:\\Users\\me\\app.py", "C:\\Users\\me\\app.py"),  # a Windows path: its drive is not a URI scheme
    ("c:/Users/me/app.py", "c:/Users/me/app.py"),
    ("", ""),
])
def test_uri_path_examples(uri, path):
    assert uri_path(uri) == path


SEGMENT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1, max_size=8)


@given(st.lists(SEGMENT, min_size=1, max_size=4))
def test_uri_path_undoes_percent_encoding(segments):
    path = "/" + "/".join(segments)
    assert uri_path("file://" + quote(path)) == path


# ---------------------------------------------------------------------------------------------- excluded_by
@pytest.mark.parametrize(("uri", "glob"), [
    ("file:///p/.env", ".env*"),
    ("file:///p/.env.local", ".env*"),
    ("file:///p/certs/server.pem", "*.pem"),
    ("file:///p/tls/SERVER.KEY", "*.key"),  # case-insensitive
    ("file:///home/me/.ssh/id_rsa", "id_rsa*"),
    ("file:///home/me/.ssh/id_rsa.pub", "id_rsa*"),
    ("file:///p/Secrets.txt", "*secret*"),
    ("file:///p/secrets/config.py", "*secret*"),  # a directory on the path counts too
    ("file:///p/aws_credentials.json", "*credential*"),
    ("file:///p/My%20Secrets/a.py", "*secret*"),  # matched after decoding
    ("file:///p/%2Eenv", ".env*"),
    ("file:///c%3A/Users/me/proj/.env", ".env*"),
    ("file:///C:/Users/me/proj/.env", ".env*"),
    ("file://server/share/proj/id_rsa", "id_rsa*"),
    ("/home/me/proj/.env", ".env*"),  # the embedded engine passes plain paths
    ("C:\\Users\\me\\proj\\.env", ".env*"),  # ... which on Windows have backslashes
    ("C:\\Users\\me\\secrets\\app.py", "*secret*"),
    ("file:///home/me/x;secret.txt", "*secret*"),
])
def test_default_globs_catch_secrets(uri, glob):
    assert excluded_by(uri, DEFAULT_EXCLUDES) == glob


@pytest.mark.parametrize("uri", [
    "file:///p/app.py",
    "file:///p/environment.py",  # ".env*" is about the name's start
    "file:///p/keys.py",  # "*.key" is a suffix
    "file:///p/pem/readme.md",
    "file:///p/src/main.rs",
    "untitled:Untitled-1",
    "C:\\Users\\me\\proj\\app.py",
])
def test_default_globs_let_ordinary_files_through(uri):
    assert excluded_by(uri, DEFAULT_EXCLUDES) is None


def test_the_first_matching_glob_is_named():
    assert excluded_by("file:///p/secret.pem", ["*.txt", "*.pem", "*secret*"]) == "*.pem"
    assert excluded_by("file:///p/secret.pem", ["*SECRET*", "*.pem"]) == "*SECRET*"  # as the user wrote it
    assert excluded_by("file:///p/secret.pem", []) is None


@pytest.mark.parametrize(("uri", "glob", "excluded"), [
    # without a slash: the file name or any directory name, never part of one
    ("file:///p/build/app.py", "build", True),
    ("file:///p/build.py", "build", False),
    ("file:///p/rebuild/app.py", "build", False),
    ("file:///p/a/b/generated_x.py", "generated_*", True),
    ("file:///p/generated_code/x.py", "generated_*", True),
    ("file:///p/a.py", "*.PY", True),
    ("file:///p/a.py", "?.py", True),
    ("file:///p/ab.py", "?.py", False),
    ("file:///p/a.py", "[ab].py", True),
    # with a slash: the whole path, from any directory down
    ("file:///p/config/prod.json", "config/*.json", True),
    ("file:///p/myconfig/prod.json", "config/*.json", False),
    ("file:///p/config/prod.json", "/config/*.json", True),
    ("file:///p/config/prod.json", "/p/config/*.json", True),
    ("file:///p/config/prod.json", "/q/config/*.json", False),
    ("file:///p/deploy/secrets/db.yaml", "**/secrets/**", True),
    ("file:///p/deploy/secrets.yaml", "**/secrets/**", False),
    ("file:///p/Deploy/Prod/x.py", "deploy/prod/*", True),
    ("C:\\p\\config\\prod.json", "config/*.json", True),
])
def test_directory_and_basename_globs(uri, glob, excluded):
    assert (excluded_by(uri, [glob]) == glob) is excluded


NAME = st.text(st.sampled_from("abcXYZ._-中😀"), min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))


@given(st.lists(NAME, min_size=1, max_size=4), st.data())
def test_a_name_glob_matches_any_name_on_the_path(names, data):
    """A glob without a slash is tried against each name on the path, whatever case the user typed."""
    path = "/" + "/".join(names)
    target = data.draw(st.sampled_from(names))
    glob = data.draw(st.sampled_from([target, target.upper(), target.lower(), target[:1] + "*", "*" + target[-1:]]))
    assert excluded_by("file://" + quote(path), [glob]) == glob
    assert excluded_by(path, [glob]) == glob
    other = "q" + target  # no name on the path holds a "q"
    assert excluded_by(path, [other]) is None
