"""The file every real-editor rewrite test opens: the selection sits after non-ASCII on its line, with a tail
after it and lines below it (editors clamp bad columns silently: text after the insertion point shows it)."""

TARGET = "OLD_EXPR"
ORIGINAL = (
    "import os\n"
    "café = OLD_EXPR  # keep this tail 😀\n"
    "print(café)  # below 中文\n"
    "z = 1\n"
)

# the same with an astral character (two UTF-16 units, four UTF-8 bytes, one code point) before the selection
# on its line: a column counted in the wrong units moves the edit
ASTRAL_ORIGINAL = ORIGINAL.replace("café = OLD_EXPR", 'tag = "😀"; café = OLD_EXPR')
