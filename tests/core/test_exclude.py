"""Which documents never reach a model: URIs to paths, and the exclude globs."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowedit.core.exclude import (DEFAULT_EXCLUDES, KeyWatch, excluded_by, holds_private_key, secret_in, uri_path,
                                   withheld)
from flowedit.core.text.document import Change, Document


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
    ("file:///home/me/.ssh/id_ed25519", "id_ed25519*"),
    ("file:///home/me/keys/id_ecdsa", "id_ecdsa*"),
    ("file:///home/me/keys/id_ecdsa_sk.pub", "id_ecdsa*"),
    ("file:///home/me/keys/id_dsa", "id_dsa*"),
    ("file:///home/me/putty/server.ppk", "*.ppk"),
    ("file:///home/me/.ssh/config", ".ssh/**"),
    ("file:///home/me/.ssh/known_hosts", ".ssh/**"),
    ("file:///home/me/.netrc", ".netrc"),
    ("file:///C:/Users/me/_netrc", "_netrc"),
    ("file:///home/me/proj/.npmrc", ".npmrc"),
    ("file:///home/me/.pypirc", ".pypirc"),
    ("file:///p/certs/client.p12", "*.p12"),
    ("file:///p/certs/client.PFX", "*.pfx"),
    ("file:///p/android/release.keystore", "*.keystore"),
    ("file:///p/server/app.jks", "*.jks"),
    ("file:///home/me/.git-credentials", "*credential*"),
    ("file:///home/me/.pgpass", ".pgpass"),
    ("file:///srv/site/.htpasswd", ".htpasswd"),
    ("file:///home/me/.kube/config", ".kube/**"),
    ("file:///p/deploy/kubeconfig.yaml", "kubeconfig*"),
    ("file:///home/me/.aws/credentials", "*credential*"),  # the older glob comes first
    ("file:///home/me/.aws/config", ".aws/**"),
    ("file:///home/me/.docker/config.json", ".docker/config.json"),
    ("C:\\Users\\me\\.ssh\\config", ".ssh/**"),
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
    "file:///p/identity.py",  # "id_*" is only the SSH key names
    "file:///p/id_utils.py",
    "file:///p/docker/config.json",  # a project's own docker folder is not the credentials file
    "file:///p/.dockerignore",
    "file:///p/ssh/client.py",
    "file:///p/aws/handler.py",
    "file:///p/npmrc.md",
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


# ---------------------------------------------------------------------------------------------- private keys
BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKjMzEfYyjiWA4R4"
KEYS = [
    f"-----BEGIN PRIVATE KEY-----\n{BODY}\n-----END PRIVATE KEY-----\n",
    f"-----BEGIN RSA PRIVATE KEY-----\r\nProc-Type: 4,ENCRYPTED\r\nDEK-Info: AES-128-CBC,1A2B\r\n\r\n{BODY}\r\n",
    f"-----BEGIN EC PRIVATE KEY-----\n{BODY}",
    f"-----BEGIN OPENSSH PRIVATE KEY-----\n{BODY}\n",
    f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{BODY}\n",
    f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{BODY}\n",
    f'KEY = "-----BEGIN PRIVATE KEY-----\\n{BODY}\\n"  # a test fixture in a source file\n',
    f"x = 1\n# 中文 😀\n-----BEGIN DSA PRIVATE KEY-----\n{BODY}\nmore = 2\n",
]
NOT_KEYS = [
    "if line.startswith('-----BEGIN PRIVATE KEY-----'):\n    return parse(line)\n",  # code about keys
    f"-----BEGIN PUBLIC KEY-----\n{BODY}\n",
    f"-----BEGIN CERTIFICATE-----\n{BODY}\n",
    "-----BEGIN PRIVATE KEY-----\n" + "short\n" * 80 + BODY,  # no body within reach of the armour line
    "",
]


@pytest.mark.parametrize("text", KEYS)
def test_private_keys_are_found_wherever_they_are(text):
    assert holds_private_key(text)
    assert withheld("file:///p/notes.py", text, DEFAULT_EXCLUDES) == "it holds a private key"


@pytest.mark.parametrize("text", NOT_KEYS)
def test_text_about_keys_is_not_a_key(text):
    assert not holds_private_key(text)
    assert withheld("file:///p/notes.py", text, DEFAULT_EXCLUDES) is None


def test_a_name_is_reported_before_content():
    assert withheld("file:///p/.env", KEYS[0], DEFAULT_EXCLUDES) == "it matches the exclude pattern '.env*'"
    assert withheld("file:///p/.env", None, []) is None


PIECES = st.sampled_from(["x = 1\n", "-----BEGIN ", "PRIVATE KEY-----\n", "RSA ", BODY[:30], BODY[30:], "\n",
                          "中文😀", "-----END PRIVATE KEY-----\n", " "])


@given(st.lists(PIECES, max_size=6).map("".join), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 60),
                                                                        st.lists(PIECES, max_size=3).map("".join)),
                                                              max_size=12))
def test_a_key_watch_agrees_with_a_whole_scan_after_any_edits(start, edits):
    """However a key is typed, pasted, cut in two or deleted, the watch says what scanning the whole
    text says, and `on_key` ran each time a key appeared where none was."""
    doc = Document("file:///p/a.py", start)
    found = []
    watch = KeyWatch(doc, lambda: found.append(doc.text))
    doc.observers.append(watch)
    expected_calls = int(holds_private_key(start))
    for at, length, text in edits:
        begin = at % (len(doc.text) + 1)
        before = holds_private_key(str(doc.text))
        doc.apply(Change(begin, min(len(doc.text), begin + length), text))
        expected_calls += not before and holds_private_key(str(doc.text))
        assert watch.holds_key == holds_private_key(str(doc.text))
    assert len(found) == expected_calls


@given(st.data())
def test_a_key_put_together_piece_by_piece_is_seen_the_moment_it_is_whole(data):
    """Typed or pasted in pieces, in any order, amid other text: the watch sees the key exactly when the
    whole text holds one, and `on_key` runs each time the text comes to hold one — once, unless a piece
    in between breaks a key the earlier pieces already made (seen: "-----BEGIN P" + "RIVATE KEY BLOCK…"
    is a key, the "G" of "PGP" breaks it, the "P " makes the PGP key whole)."""
    key = data.draw(st.sampled_from(KEYS))
    around = data.draw(st.sampled_from(["", "x = 1\n", "中文😀 " * 40 + "\n"]))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(key) - 1), max_size=8)))
    pieces = [key[a:b] for a, b in zip([0, *cuts], [*cuts, len(key)])]
    doc = Document("file:///p/a.py", around + around)
    found = []
    watch = KeyWatch(doc, lambda: found.append(len(doc.text)))
    doc.observers.append(watch)
    present: set[int] = set()
    appeared = 0
    for i in data.draw(st.permutations(range(len(pieces)))):
        at = len(around) + sum(len(pieces[j]) for j in present if j < i)
        before = holds_private_key(str(doc.text))
        doc.apply(Change(at, at, pieces[i]))
        present.add(i)
        appeared += not before and holds_private_key(str(doc.text))
        assert watch.holds_key == holds_private_key(str(doc.text))
    assert doc.text == around + key + around and appeared >= 1 and len(found) == appeared


def test_secret_in_names_a_private_key_first_then_a_credential():
    key = f"-----BEGIN PRIVATE KEY-----\n{BODY}\n"
    assert secret_in(key + "token: ghp_abcdefghijklmnopqrstuvwxyz0123\n") == "a private key"
    assert secret_in("oauth_token: gho_abcdefghijklmnopqrstuvwxyz0123\n") == "a credential"
    assert secret_in("oauth_token: ${GH_TOKEN}\n") is None
