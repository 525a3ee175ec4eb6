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


#: The user's cache folder of pinb (outside any project): `$PINB_CACHE_DIR`, else `$XDG_CACHE_HOME/pinb`, else
#: `~/.cache/pinb`.
CACHE_DIR_ENV = "PINB_CACHE_DIR"


def user_cache_dir() -> Path:
    """The folder pinb keeps its per-user caches in (not created here)."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pinb"


#: The prefix of the one temporary folder each pinb command owns: `pinb-<pid>-<random>`.
PROCESS_FOLDER_PREFIX = "pinb-"
_PROCESS_FOLDER: Path | None = None


def process_folder() -> Path:
    """This process's own temporary folder, made on first use (mode 700) under the system's, and made the place
    of every temporary file and folder of this process (`tempfile`) and of the processes it starts (`TMPDIR`):
    scenario projects, kernel connection files and sockets. It is removed when the process exits; folders that
    processes killed outright left behind are removed by the next pinb command."""
    global _PROCESS_FOLDER
    if _PROCESS_FOLDER is not None and _PROCESS_FOLDER.is_dir():
        return _PROCESS_FOLDER
    import atexit
    import tempfile

    base = Path(tempfile.gettempdir())
    _remove_abandoned(base)
    folder = Path(tempfile.mkdtemp(prefix=f"{PROCESS_FOLDER_PREFIX}{os.getpid()}-", dir=base))
    _PROCESS_FOLDER = folder
    tempfile.tempdir = str(folder)
    os.environ["TMPDIR"] = str(folder)
    atexit.register(_remove_process_folder, folder, os.getpid())
    return folder


def _remove_process_folder(folder: Path, owner: int) -> None:
    import shutil

    if os.getpid() == owner:  # not from a forked child that inherited the handler
        shutil.rmtree(folder, ignore_errors=True)


def _remove_abandoned(base: Path) -> None:
    """Remove `pinb-<pid>-…` folders of this user whose process is gone."""
    import shutil

    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            name = entry.name
            if not name.startswith(PROCESS_FOLDER_PREFIX):
                continue
            pid = name[len(PROCESS_FOLDER_PREFIX) :].split("-", 1)[0]
            if not pid.isdigit() or pid_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                info = entry.lstat()
                if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
                    shutil.rmtree(entry, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
