"""The README's settings example is a test target: it is valid, and its exclude list is the default one."""

from __future__ import annotations

import json
import re
from pathlib import Path

from flowedit.core.exclude import DEFAULT_EXCLUDES
from flowedit.lsp.settings.model import parse_settings

README = Path(__file__).parents[1] / "README.md"


def test_the_readme_settings_example_is_valid_and_shows_the_default_excludes():
    section = README.read_text(encoding="utf-8").split("### Settings", 1)[1]
    example = json.loads(re.search(r"```json\n(.*?)\n```", section, re.S).group(1))
    settings, problems = parse_settings(example, {})
    assert problems == []
    assert tuple(example["exclude"]) == DEFAULT_EXCLUDES == tuple(settings.exclude)
