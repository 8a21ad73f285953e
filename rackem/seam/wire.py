"""What a wire does to a message that the seam's calls do too: the receiver gets its own copy."""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import Message

__all__ = ["copied"]

M = TypeVar("M", bound=Message)


def copied(message: M) -> M:
    """``message`` as the other side would have parsed it off the wire: its own object."""
    copy = type(message)()
    copy.CopyFrom(message)
    return copy
