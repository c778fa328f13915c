"""Build artefacts kept across programs and calls: compile once per distinct program.

A bounded in-memory LRU keyed by a program's ``build_key`` (a content hash of its
sources, flags and toolchain). The engine consults it before a build step and
fills it after a successful one.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping

MIB = 1024 * 1024


class BuildCache:
    """Artefacts by build key, evicting the least recently used beyond ``max_bytes``.

    Args:
        max_bytes: Total size of the artefacts kept.
    """

    def __init__(self, max_bytes: int = 512 * MIB) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, dict[str, bytes]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self._building: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> dict[str, bytes] | None:
        """The artefacts for a key, or None."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item

    def put(self, key: str, files: Mapping[str, bytes]) -> None:
        """Keep artefacts (ignored when they alone exceed the cache)."""
        size = sum(len(v) for v in files.values())
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._size -= sum(len(v) for v in old.values())
            self._items[key] = dict(files)
            self._size += size
            while self._size > self.max_bytes and self._items:
                _, evicted = self._items.popitem(last=False)
                self._size -= sum(len(v) for v in evicted.values())

    def claim(self, key: str) -> asyncio.Event | None:
        """Take the build of ``key`` (None), or get the event its builder will set.

        Concurrent verifications of one program in one event loop build it once: the
        first claims it, the others wait for the event and then read the cache.
        """
        loop = asyncio.get_running_loop()
        with self._lock:
            current = self._building.get(key)
            if current is not None and current[0] is loop:
                return current[1]
            self._building[key] = (loop, asyncio.Event())
            return None

    def release(self, key: str) -> None:
        """The build of ``key`` is over (succeeded or not): wake whoever waits."""
        loop = asyncio.get_running_loop()
        with self._lock:
            current = self._building.get(key)
            if current is None or current[0] is not loop:
                return
            del self._building[key]
        current[1].set()

    @contextlib.asynccontextmanager
    async def slot(self, key: str, wait_s: float) -> AsyncIterator[dict[str, bytes] | None]:
        """The cached build of ``key``, or None with the build of it taken for the block.

        A build of ``key`` already under way in this loop is waited for (at most ``wait_s``)
        and its result read; if it left nothing, the block builds without a claim. An empty
        ``key`` is never cached.
        """
        cached = self.get(key) if key else None
        claimed = False
        if key and cached is None:
            pending = self.claim(key)
            if pending is None:
                claimed = True
            else:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(pending.wait(), wait_s)
                cached = self.get(key)
        try:
            yield cached
        finally:
            if claimed:
                self.release(key)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._items.clear()
            self._size = 0

    def __len__(self) -> int:
        return len(self._items)


#: The cache verifiers share unless given their own.
DEFAULT_CACHE = BuildCache()
