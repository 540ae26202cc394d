"""The mutation runner's tests share one tiny checkout: the repository's layout rule (``ahasd/hw``
a symlink to ``hw/``), one module ``hw/tiny.py`` and one test file."""

from pathlib import Path

import pytest


def write_tiny_checkout(root, module, tests, catalogue=None):
    """Write the checkout under ``root`` (``catalogue.toml`` too when given); return its path."""
    root = Path(root)
    for package in ("ahasd", "hw"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    (root / "hw" / "tiny.py").write_text(module)
    (root / "ahasd" / "hw").symlink_to("../hw")
    (root / "tests").mkdir()
    (root / "tests" / "test_tiny.py").write_text(tests)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\n'
                                         'addopts = "--import-mode=importlib"\n')
    if catalogue is not None:
        (root / "catalogue.toml").write_text(catalogue)
    return root


@pytest.fixture
def tiny_checkout():
    """:func:`write_tiny_checkout`, for the tests of this folder."""
    return write_tiny_checkout
