"""An optional cache of verification results, keyed by a hash of everything they depend on.

Deduplication inside a batch is always on; this cache carries results *between* calls: a
GRPO run that sees a completion again, or an evaluation re-run after a crash. Results live
in memory (least recently used first out, bounded) and, with ``path``, in a SQLite file
that several processes may share.

The cache stores results under keys it is given; what a key covers is the job's to say
(:meth:`verifiers.core.Job.result_key`: the SDK version, the language and its toolchain,
the runtime, the completion, the tests and every option). Infrastructure faults
(``sandbox_error``) are never cached: the next call tries again.
"""

from __future__ import annotations

import collections
import os
import sqlite3
import threading

from verifiers.results import Result, Status

_SCHEMA = "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, result TEXT NOT NULL)"


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
        self._memory: collections.OrderedDict[str, Result] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
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
            f"hits={self.hits}, misses={self.misses})"
        )

    def get(self, key: str) -> Result | None:
        """The cached result, marked ``cached``, or None."""
        with self._lock:
            result = self._memory.get(key)
            if result is not None:
                self._memory.move_to_end(key)
            elif self._db is not None:
                row = self._db.execute(
                    "SELECT result FROM results WHERE key = ?", (key,)
                ).fetchone()
                if row is not None:
                    result = Result.model_validate_json(row[0])
                    self._remember(key, result)
            if result is None:
                self.misses += 1
                return None
            self.hits += 1
        return result.model_copy(update={"cached": True})

    def put(self, key: str, result: Result) -> None:
        """Keep a result (infrastructure faults are not kept)."""
        if result.status is Status.SANDBOX_ERROR or result.infra_error:
            return
        result = result.model_copy(update={"cached": False})
        with self._lock:
            self._remember(key, result)
            if self._db is not None:
                self._db.execute(
                    "INSERT OR REPLACE INTO results (key, result) VALUES (?, ?)",
                    (key, result.model_dump_json()),
                )
                self._db.commit()

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
                self._db.execute("DELETE FROM results")
                self._db.commit()

    def close(self) -> None:
        """Close the disk copy (the memory copy stays usable)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
