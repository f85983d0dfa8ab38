"""Reading a SQL file given to `sqlengine run`, `-f` / `-i` or the shell's SOURCE."""

from __future__ import annotations

from pathlib import Path


class SqlFileError(Exception):
    """A SQL file that cannot be read (``unreadable``) or is not UTF-8: the message names the
    path (and the place)."""

    def __init__(self, message: str, unreadable: bool) -> None:
        super().__init__(message)
        self.unreadable = unreadable


def read_sql(path: str | Path) -> str:
    """The file's text (UTF-8, a byte order mark dropped).

    Raises:
        SqlFileError: the file cannot be read, or is not UTF-8 (naming the line and column of
            its first bad byte).
    """
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise SqlFileError(f"{path}: {e.strerror or e}", unreadable=True) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        msg = f"{path}:{line}:{column}: not UTF-8 text (byte 0x{data[e.start]:02x})"
        raise SqlFileError(msg, unreadable=False) from None
