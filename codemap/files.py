"""Atomic writes and content hashes: every output and cache file goes through here."""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import shutil
from pathlib import Path
from typing import Callable, Iterator, TypeVar

try:  # POSIX; elsewhere builds are not serialised, and the atomic renames alone keep caches whole
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

log = logging.getLogger(__name__)
T = TypeVar("T")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it over `path` only if the block succeeds.

    A run killed half-way leaves the temporary file (removed on a clean exception) but never a
    half-written `path`: the rename is atomic on one file system. The file gets the mode any new
    file gets (0666 less the umask), not mkstemp's 0600: colleagues reading a workbook on a
    shared drive must be able to open it.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = _create_beside(target, lambda p: os.close(
        os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)))
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def temp_dir_beside(target: str | os.PathLike) -> Path:
    """A new empty folder `.NAME.*.part` beside `target`, to be filled and renamed onto it.

    Its mode is a new folder's (0777 less the umask), not mkdtemp's 0700, so the folder renamed
    into a shared cache stays readable by the colleagues who share it."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    return _create_beside(target, lambda p: os.mkdir(p, 0o777))


def _create_beside(target: Path, create) -> Path:
    """Create (with `create`, which must fail if the path exists) an unused temporary name
    `.NAME.<random>.part` beside `target`; the mode comes from `create` and the umask."""
    for _ in range(100):
        candidate = target.parent / f".{target.name}.{secrets.token_hex(6)}.part"
        try:
            create(candidate)
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"no unused temporary name beside {target}")


@contextlib.contextmanager
def locked(target: str | os.PathLike, doing: str) -> Iterator[None]:
    """Hold the lock of `target` (a file `.NAME.lock` beside it) for the block: one process at a
    time builds a cache entry that several may ask for at once (parallel `codemap map` runs on one
    cache). A process that must wait says so once (`doing`: what the holder is doing, "exporting
    the model"). The kernel drops the lock when its holder dies, so a killed build never blocks
    the next; the lock file itself stays (deleting it would let two processes hold two locks)."""
    target = Path(target)
    if fcntl is None:
        yield
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = open(target.parent / f".{target.name}.lock", "a+b")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("waiting for another codemap process that is %s (%s)", doing, target)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # releases the lock


def build_once(target: str | os.PathLike, cached: Callable[[], T | None], build: Callable[[], T],
               doing: str) -> T:
    """`cached()` when it finds the entry complete, else `build()` under the lock of `target`.
    Asked again once the lock is held: a process that waited for another's build uses that build
    instead of doing the same long work again."""
    found = cached()
    if found is not None:
        return found
    with locked(target, doing):
        found = cached()
        return found if found is not None else build()


def publish_dir(tmp: Path, target: Path) -> None:
    """Rename the finished folder `tmp` onto `target`. When a complete `target` is already there
    (another process published first, outside any lock), that one is kept and `tmp` removed: both
    were built from the same inputs."""
    try:
        os.replace(tmp, target)
    except OSError:
        if not target.is_dir():
            raise
        shutil.rmtree(tmp, ignore_errors=True)


def remove_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files a killed write of `path` left (`.NAME.*.part`, see atomic_path),
    or, for a folder, every such file in it. Call it only where no other process writes `path`."""
    target = Path(path)
    pattern = ".*.part" if target.is_dir() else f".{target.name}.*.part"
    stale = list((target if target.is_dir() else target.parent).glob(pattern))
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in chunks so big weight files do not fill memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def stamped_sha256(path: Path, book: Path) -> str:
    """sha256_file of `path`, remembered in the JSON `book` with the file's size, mtime and inode:
    a model's weights (470 MB for the default) are read once, not on every run (0.3 s each). A
    file written again gets a new mtime and is hashed again; a book that cannot be read or
    written only costs the hashing."""
    stat = os.stat(path)
    stamp = [stat.st_size, stat.st_mtime_ns, stat.st_ino]
    key = str(Path(path).resolve())
    try:
        known = json.loads(Path(book).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    entry = known.get(key) if isinstance(known, dict) else None
    if isinstance(entry, list) and entry[:3] == stamp and len(entry) == 4:
        return entry[3]
    digest = sha256_file(path)
    try:
        with atomic_path(book) as tmp:
            tmp.write_text(json.dumps({**(known if isinstance(known, dict) else {}),
                                       key: [*stamp, digest]}), encoding="utf-8")
    except OSError:
        pass
    return digest


def sha256_text(*parts: str) -> str:
    """Hex sha256 of text parts, each terminated so that ("ab", "c") != ("a", "bc")."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()
