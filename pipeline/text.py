"""Text for a terminal: data and file names are shown, never obeyed."""

from __future__ import annotations

#: C0 controls but newline, DEL and C1 controls: an escape sequence among them would drive the terminal
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)] if c != 0x0A}


def printable(text: str) -> str:
    """``text`` with its control characters written as ``\\xNN``: for what reaches a terminal."""
    return text.translate(_CONTROL)
