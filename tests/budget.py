"""A property test's own example budget, scaled by the hypothesis profile in force (tests/conftest.py)."""

from hypothesis import settings


def budget(examples: int) -> int:
    """`examples` in the default profile; as many times more as the profile in force draws over it
    (four times in CI)."""
    return examples * settings.default.max_examples // settings.get_profile("default").max_examples
