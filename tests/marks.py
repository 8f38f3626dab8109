"""Marks given by what a test needs, so that no test has to remember them."""

import pytest


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that reads the demo's ledger waits for the demo's nightly: it is marked ``slow`` (``./run test --fast``
    leaves it out)."""
    for item in items:
        if "demo_db" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
