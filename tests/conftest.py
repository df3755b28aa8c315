"""Shared fixtures: a live xflydsl kernel driven through jupyter_client."""

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
# Tests count compiles: the disk cache (on by default) would hand a launcher
# the artifact another test or an earlier run compiled. Its own tests turn it on.
os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")

from kernel_session import KernelSession  # noqa: E402


@pytest.fixture(scope="module")
def kernel():
    session = KernelSession()
    yield session
    session.shutdown()


@pytest.fixture
def fresh_kernel():
    session = KernelSession()
    yield session
    session.shutdown()


def _skips_fail_on_ci(report):
    """On CI (CI=true) a skip is a failure: a dependency the suite needs is
    missing. Only GPU tests may be absent there, and they are not collected
    (tests/gpu/conftest.py says why in one line)."""
    if report.skipped and os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped on CI, where every dependency must be installed: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    _skips_fail_on_ci((yield).get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    _skips_fail_on_ci((yield).get_result())
