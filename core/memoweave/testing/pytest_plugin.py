"""The ``pytest11`` entry point of memoweave (loaded in every pytest run where it is installed).

It only asks pytest to rewrite the asserts of the conformance kit so a failing standard
test shows the compared values. It imports nothing heavy and has no other side effect.
"""

from __future__ import annotations

import pytest

from memoweave.testing._rewrite import KIT_MODULES

pytest.register_assert_rewrite(*KIT_MODULES)
