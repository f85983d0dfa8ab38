"""Shared fixtures, the --update-golden switch, and which tests share a worker when the suite
runs on several (pytest-xdist: ``-n 2 --dist loadgroup``, as .ci/run does)."""

from __future__ import annotations

from pathlib import Path

import pytest

# Tests that must not run at the same time as others of their group run in one worker, one
# after another: those of a local service that a test may start when it has stopped (two
# workers starting PostgreSQL at once would collide), and the Spark tests (one JVM, started
# once per process, rather than one per worker).
_GROUPS = {
    "spark": ("tests/spark/",),
    "postgres": ("tests/connectors/test_jdbc_", "tests/connectors/test_lookup_join.py"),
    "nats": ("tests/connectors/test_nats",),
    "mqtt": ("tests/connectors/test_mqtt.py",),
}
_ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files and fixture expectations from current output")


# (tryfirst: xdist's own hook turns the marks into groups, so they must be there before it)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        path = item.path.resolve().relative_to(_ROOT).as_posix()
        if item.get_closest_marker("spark") is not None:  # (outside tests/spark/ too)
            item.add_marker(pytest.mark.xdist_group("spark"))
            continue
        for group, prefixes in _GROUPS.items():
            if path.startswith(prefixes):
                item.add_marker(pytest.mark.xdist_group(group))
                break


def pytest_collection_finish(session: pytest.Session) -> None:
    """Under ``--dist loadgroup`` each grouped test's id carries its group (xdist's way of
    telling its scheduler): a pytest on which that stopped working (9.2 with xdist 3.8,
    pytest-xdist#1386) ran the Spark tests in both workers at once, two JVMs, without a word."""
    if not getattr(session.config.option, "loadgroup", False):  # (set in xdist workers)
        return
    lost = [i.nodeid for i in session.items
            if i.get_closest_marker("xdist_group") is not None and "@" not in i.nodeid]
    if lost:
        raise pytest.UsageError(f"--dist loadgroup lost the group of {len(lost)} test(s), "
                                f"{lost[0]} first: pytest and pytest-xdist disagree")


@pytest.fixture
def repo_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory of the test's own in which the repository's relative paths work:
    ``queries/`` (the scripts' inputs) is the repository's, while what a script writes under
    a relative path (``out/...``) stays the test's, so tests on two workers running the same
    script do not write into one folder."""
    (tmp_path / "queries").symlink_to(_ROOT / "queries", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
