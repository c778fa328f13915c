"""An optional cache of verification results, keyed by a hash of everything they depend on.

Deduplication inside a batch is always on; this cache carries results *between* calls: a
GRPO run that sees a completion again, or an evaluation re-run after a crash. Results live
in memory (least recently used first out, bounded) and, with ``path``, in a SQLite file
that several processes may share.

Keys come from the job (:meth:`verifiers.core.Job.result_key`): the SDK version, the
language and its toolchain (the interpreter or compiler version), the runtime, the
completion, the tests, every option (policy, limits, comparison, test selection), and the
contents of the files the tests name (a SQL database by path: its SHA-256 from
:meth:`ResultCache.file_digest`, computed again whenever the file's size, mtime, ctime or
inode changes). A result read from a PostgreSQL server depends on data no key can see,
so its key marks it uncacheable (``UNCACHED``); infrastructure faults (``sandbox_error``)
are never cached either: the next call tries again.

The disk copy is authenticated: every entry carries an HMAC-SHA256 of its key and result
under a secret kept beside the file (``<path>.key``, created on first use, owner-only
permissions, refused otherwise). An entry that does not verify (a tampered file, or one
written under another secret) is ignored, logged and counted in ``rejected``: a cache
file is never a way to hand a program a verdict.

The cache is an optimisation, never a point of failure: any error of its disk copy (a
full or locked disk, a broken file, SQLite out of memory) makes a lookup a miss and a
store a store in memory only, logged and counted in ``errors``; it never raises out of
:meth:`ResultCache.get` or :meth:`ResultCache.put`, so no result of a batch is lost to it.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import hmac
import logging
import os
import secrets
import sqlite3
import stat
import threading

from verifiers.results import Result, Status

log = logging.getLogger("verifiers.result_cache")

# A table of its own: entries of the unsigned format that came before are never read.
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS signed_results "
    "(key TEXT PRIMARY KEY, result TEXT NOT NULL, mac TEXT NOT NULL)"
)
#: Keys of results that must not be kept (they depend on something outside the key).
UNCACHED = "uncached:"
_SECRET_BYTES = 32
_CHUNK = 1 << 20


def secret_path(path: str) -> str:
    """Where the secret of the cache file ``path`` is kept."""
    return path + ".key"


def _read_secret(path: str) -> bytes | None:
    """The secret in ``path``, or None if there is none; refuses one others could read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ValueError(f"path: cannot read the cache's secret {path}: {err}") from err
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise ValueError(f"path: the cache's secret {path} is not a file of this user")
        if info.st_mode & 0o077:
            raise ValueError(
                f"path: the cache's secret {path} is readable or writable by others "
                f"(mode {stat.S_IMODE(info.st_mode):o}); chmod 600 it or delete it"
            )
        text = f.read().decode("ascii", errors="replace").strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != _SECRET_BYTES:
        raise ValueError(f"path: the cache's secret {path} is not a {_SECRET_BYTES}-byte key")
    return secret


def load_secret(path: str) -> bytes:
    """The secret kept in ``path``, created (owner-only) if missing.

    Created under a temporary name and linked into place, so that a process racing
    this one reads either no file or the whole secret, never a partial one.
    """
    found = _read_secret(path)
    if found is not None:
        return found
    temporary = f"{path}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(_SECRET_BYTES).hex().encode())
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.link(temporary, path)
    except OSError as err:
        raise ValueError(f"path: cannot create the cache's secret {path}: {err}") from err
    finally:
        os.unlink(temporary)
    secret = _read_secret(path)
    assert secret is not None
    return secret


class ResultCache:
    """Results by content hash, in memory and optionally on disk.

    Args:
        max_entries: Most results kept in memory (the disk copy is not bounded).
        path: A SQLite file for results that outlive the process (created if missing).

    Example:
        >>> cache = verifiers.ResultCache(path="eval-cache.sqlite")
        >>> verifiers.score_batch(items, cache=cache)  # a re-run skips what is done
    """

    def __init__(self, max_entries: int = 100_000, path: str | os.PathLike[str] | None = None):
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError(f"max_entries: expected a positive integer, got {max_entries!r}")
        self.max_entries = max_entries
        self.path = os.fspath(path) if path is not None else None
        self.hits = 0
        self.misses = 0
        #: Disk entries ignored because their authentication code did not verify.
        self.rejected = 0
        #: Lookups and stores of the disk copy that failed (a miss, or kept in memory only).
        self.errors = 0
        self._memory: collections.OrderedDict[str, Result] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._digests: dict[tuple[str, int, int, int, int, int], str] = {}
        self._db: sqlite3.Connection | None = None
        self._secret = b""
        if self.path is not None:
            if os.path.isdir(self.path):
                raise ValueError(f"path: cannot use {self.path} as a result cache: a directory")
            self._secret = load_secret(secret_path(self.path))
            try:
                self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute(_SCHEMA)
                self._db.commit()
            except sqlite3.Error as err:
                raise ValueError(f"path: cannot use {self.path} as a result cache: {err}") from err

    def __len__(self) -> int:
        return len(self._memory)

    def __repr__(self) -> str:
        return (
            f"ResultCache(entries={len(self)}, path={self.path!r}, "
            f"hits={self.hits}, misses={self.misses}, rejected={self.rejected})"
        )

    def file_digest(self, path: str) -> str:
        """SHA-256 of a file, hashed again whenever its size, times or inode change.

        Caveat: a file rewritten in place to the same size within one mtime and ctime
        tick (nanoseconds on most file systems) keeps its old digest in this process.
        """
        try:
            info = os.stat(path)
        except OSError as err:
            return f"{path}: {type(err).__name__}"  # fails the same way when verified
        memo = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        with self._lock:
            found = self._digests.get(memo)
        if found is not None:
            return found
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    h.update(chunk)
        except OSError as err:
            return f"{path}: {type(err).__name__}"
        digest = h.hexdigest()
        with self._lock:
            self._digests[memo] = digest
        return digest

    def _mac(self, key: str, result: str) -> str:
        message = key.encode() + b"\0" + result.encode("utf-8", errors="surrogatepass")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def get(self, key: str) -> Result | None:
        """The cached result, marked ``cached``, or None.

        A disk entry that fails its authentication check is None too: it is logged and
        counted in ``rejected``. A disk copy that cannot be read is a miss (logged,
        counted in ``errors``): this never raises.
        """
        if key.startswith(UNCACHED):
            return None
        with self._lock:
            result = self._memory.get(key)
            if result is not None:
                self._memory.move_to_end(key)
            elif self._db is not None:
                result = self._read(key)
            if result is None:
                self.misses += 1
                return None
            self.hits += 1
        return result.model_copy(update={"cached": True})

    def _read(self, key: str) -> Result | None:
        """The disk entry of ``key``, verified; None when absent or unreadable."""
        assert self._db is not None
        try:
            row = self._db.execute(
                "SELECT result, mac FROM signed_results WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                return None
            result = self._verified(key, row[0], row[1])
        except Exception as err:  # sqlite3.Error, MemoryError...: a miss, never a failure
            self._failed("read", err)
            return None
        if result is not None:
            self._remember(key, result)
        return result

    def _failed(self, action: str, err: BaseException) -> None:
        self.errors += 1
        log.warning(
            "result cache %s: could not %s the disk copy (%s: %s); going on without it",
            self.path,
            action,
            type(err).__name__,
            err,
        )

    def _verified(self, key: str, text: object, mac: object) -> Result | None:
        """The result of a disk entry whose code verifies, else None (logged, counted)."""
        if (
            isinstance(text, str)
            and isinstance(mac, str)
            and hmac.compare_digest(mac, self._mac(key, text))
        ):
            try:
                return Result.model_validate_json(text)
            except ValueError:
                pass  # authentic but unreadable: treated as tampered all the same
        self.rejected += 1
        log.warning(
            "result cache %s: the entry %s does not verify (tampered, or written under "
            "another secret); ignored",
            self.path,
            key[:16],
        )
        return None

    def put(self, key: str, result: Result) -> None:
        """Keep a result (infrastructure faults, and results keyed ``uncached:``, are not).

        A disk copy that cannot be written keeps the result in memory only (logged,
        counted in ``errors``): this never raises.
        """
        if result.status is Status.SANDBOX_ERROR or result.infra_error:
            return
        if key.startswith(UNCACHED):
            return
        result = result.model_copy(update={"cached": False})
        with self._lock:
            self._remember(key, result)
            if self._db is not None:
                try:
                    text = result.model_dump_json()
                    self._db.execute(
                        "INSERT OR REPLACE INTO signed_results (key, result, mac) VALUES (?, ?, ?)",
                        (key, text, self._mac(key, text)),
                    )
                    self._db.commit()
                except Exception as err:
                    with contextlib.suppress(Exception):
                        self._db.rollback()  # no half-done transaction left for the next
                    self._failed("write", err)

    def _remember(self, key: str, result: Result) -> None:
        self._memory[key] = result
        self._memory.move_to_end(key)
        while len(self._memory) > self.max_entries:
            self._memory.popitem(last=False)

    def clear(self) -> None:
        """Forget every result, in memory and on disk."""
        with self._lock:
            self._memory.clear()
            if self._db is not None:
                self._db.execute("DELETE FROM signed_results")
                self._db.commit()

    def close(self) -> None:
        """Close the disk copy (the memory copy stays usable)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
