"""CI must not go green on tests that never ran (issue 26).

Without PostgreSQL the team tests skip on a developer's machine, but in CI
(``CI=true``) they fail: `.ci/run` installs PostgreSQL, and a run where that did not
work must be red, not 26 quiet skips.
"""

from __future__ import annotations

import re

import pytest

from . import test_team_support
from .test_team_support import NO_POSTGRES, cluster


@pytest.fixture
def no_postgres(monkeypatch):
    monkeypatch.setattr(test_team_support, "find_bin_dir", lambda: None)
    monkeypatch.setattr(test_team_support, "_cluster", None)


@pytest.mark.parametrize("value", ["true", "1", "TRUE"])
def test_team_tests_fail_without_postgres_in_ci(no_postgres, monkeypatch, value):
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="CI=true: PostgreSQL is not installed"):
        cluster()


@pytest.mark.parametrize("value", [None, "", "false"])
def test_team_tests_skip_without_postgres_elsewhere(no_postgres, monkeypatch, value):
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception, match=re.escape(NO_POSTGRES)):
        cluster()
