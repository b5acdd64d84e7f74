"""Lone surrogates read as U+FFFD keep every position where the editor has it (documents.readable)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from flowedit.core.text.document import Document, Encoding
from flowedit.lsp.documents import readable

# text with lone surrogates mixed in (a str from JSON holds surrogates only as lone ones)
texts = st.lists(st.text(max_size=8) | st.sampled_from(["\ud83d", "\udc00", "\udbff", "😀", "中", "\n"]),
                 max_size=12).map("".join)


def wtf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@given(texts, st.integers(min_value=0))
def test_every_position_stays_where_the_editor_has_it(text, at):
    clean, count = readable(text)
    assert "\ud83d" not in clean and count == sum(0xD800 <= ord(c) <= 0xDFFF for c in text)
    clean.encode("utf-8")  # encodable now
    assert len(clean) == len(text) and wtf8_length(clean) == wtf8_length(text)
    assert len(clean.encode("utf-16-le")) == len(text.encode("utf-16-le", "surrogatepass"))
    offset = at % (len(text) + 1)
    for enc in (Encoding.UTF16, Encoding.UTF8, Encoding.UTF32):
        theirs, ours = Document("u", text), Document("u", clean)
        assert ours.position_at(offset, enc) == theirs.position_at(offset, enc)
