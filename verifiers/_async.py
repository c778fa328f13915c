"""The engine loop: every verification runs on one event loop owned by the SDK.

Sandboxes are subprocesses, and asyncio binds subprocesses to the loop that started them.
Running all verifications on one long-lived loop, in a daemon thread, lets a runtime keep
warm sandboxes between calls (``score`` after ``score``, training step after training step)
whatever loop, thread or synchronous code the caller uses. Synchronous callers block on it
(:func:`run_sync`); async callers await it from their own loop (:func:`on_engine`).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_shutdown_hooks: list[Callable[[], Coroutine[Any, Any, None]]] = []


def engine_loop() -> asyncio.AbstractEventLoop:
    """The SDK's event loop, started on first use in a daemon thread."""
    global _loop, _thread
    with _lock:
        if _loop is None or not _loop.is_running():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            _thread = threading.Thread(target=serve, name="verifiers-engine", daemon=True)
            _thread.start()
            ready.wait()
            _loop = loop
        return _loop


def in_engine() -> bool:
    """Whether the caller runs on the engine loop's thread."""
    return _thread is not None and threading.current_thread() is _thread


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on the engine loop and wait for its result (blocking)."""
    if in_engine():
        coro.close()
        raise RuntimeError("a blocking verifiers call cannot run on the engine loop; await it")
    future = asyncio.run_coroutine_threadsafe(coro, engine_loop())
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


async def on_engine(coro: Coroutine[Any, Any, T]) -> T:
    """Await a coroutine that runs on the engine loop, from any loop."""
    if in_engine():
        return await coro
    future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, engine_loop())
    return await asyncio.wrap_future(future)


def on_shutdown(hook: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``hook()`` on the engine loop when the interpreter exits (closing warm sandboxes)."""
    _shutdown_hooks.append(hook)


async def run_shutdown_hooks() -> None:
    """Run the shutdown hooks now (closing idle warm sandboxes); the loop keeps running."""
    for hook in list(_shutdown_hooks):
        with contextlib.suppress(Exception):
            await hook()


@atexit.register
def _shutdown() -> None:
    loop = _loop
    if loop is None or not loop.is_running():
        return
    for hook in _shutdown_hooks:
        # The process is exiting: best effort.
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(hook(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)


def run_in_thread(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine on a private loop in a new thread, whatever loop the caller is in.

    For one-off work that must not depend on (or block on) any other loop, such as checking
    that a sandbox can start at all.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="verifiers-once")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
