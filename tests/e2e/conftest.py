"""Every end-to-end test runs a command, a nightly, Spark or the browser: each is marked ``slow`` (the fast inner loop,
``./run test --fast``, leaves them out; CI runs them)."""

from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.slow)
