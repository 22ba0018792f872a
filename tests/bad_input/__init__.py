"""The bad-input corpus: each case asserts the exact outcome of one hostile or broken input."""

import pytest

pytest.register_assert_rewrite("tests.bad_input.cases")
