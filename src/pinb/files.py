"""Reading and writing the files pinb is given: regular files only, within stated sizes, written atomically.

Opening a FIFO blocks until a writer comes (forever, for a path a user mistyped), reading `/dev/zero` never ends,
and a directory or a device is no scenario. `open_regular` opens without blocking and refuses anything but a
regular file; `read_bytes`/`read_text` also refuse a file larger than the limit the caller states, in one line.

`write_atomic` writes through a temporary file in the same folder (flushed and synced) renamed onto the target,
so a full disk or a crash leaves the old file whole (or no file), never a truncated one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from typing import BinaryIO

from pinb.errors import PinbError

#: The stated limits (bytes) of what pinb reads: a scenario file, a chapter text, a notebook or run file.
SCENARIO_LIMIT = 4 * 1024 * 1024
CHAPTER_TEXT_LIMIT = 16 * 1024 * 1024
NOTEBOOK_LIMIT = 256 * 1024 * 1024

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFSOCK: "a socket",
}


class FileError(PinbError):
    """A file pinb was given cannot be read or written as asked (one line: the path and why)."""


class NotRegularFile(OSError):
    """The path is not a regular file (an `OSError`, so callers that handle unreadable files handle this too)."""


def open_regular(path: str | Path) -> BinaryIO:
    """Open `path` for reading in binary, refusing (`NotRegularFile`) anything but a regular file, without ever
    blocking on a FIFO."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise NotRegularFile(errno.EINVAL, f"{kind}, not a regular file", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | Path, *, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them; else `FileError` in one line."""
    try:
        with open_regular(path) as handle:
            data = handle.read(limit + 1)
    except NotRegularFile as exc:
        raise FileError(f"cannot read {what} {path}: it is {exc.strerror}") from None
    except OSError as exc:
        raise FileError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise FileError(f"{what} {path} is larger than the limit of {_size(limit)}")
    return data


def read_text(path: str | Path, *, limit: int, what: str = "file") -> str:
    """`read_bytes` decoded as UTF-8; else `FileError` naming the first bad byte."""
    data = read_bytes(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Replace `path` with `data` (text is written as UTF-8) all at once; `FileError` if it cannot be."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if path.is_dir():
        raise FileError(f"cannot write {path}: it is a folder")
    if path.exists() and not path.is_file():
        raise FileError(f"cannot write {path}: it is not a regular file")
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(3)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), _mode(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
    with contextlib.suppress(OSError):  # the rename itself survives a crash once the folder is synced
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _mode(path: Path) -> int:
    """The target's own permissions when it exists, else what the umask gives an ordinary new file."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(path.stat().st_mode)
    return 0o666


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"
