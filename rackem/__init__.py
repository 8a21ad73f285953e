"""rackem: the command line, the local composition root, and the protocol client."""

from __future__ import annotations

__version__ = "0.1.0"
