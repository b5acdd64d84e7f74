"""Hypothesis profiles. A developer's run draws hypothesis's default number of examples; CI's ("ci", chosen
by HYPOTHESIS_PROFILE=ci, which .ci/run exports) draws four times as many, with no deadline (a loaded
machine is not a failure), so it finds what a quick run misses. Keep every failure it finds as an @example.
The `--hypothesis-profile` option chooses a profile too."""

import os

from hypothesis import settings

settings.register_profile("ci", max_examples=4 * settings.get_profile("default").max_examples, deadline=None,
                          print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
