"""The bounded queue of one server process: admit work or say "busy" at once, never hang.

A request asks for as many places as it has verifications, and for its cost: the memory
it may take, estimated from what it asks (its body, its JSON values, its tests; see
:func:`request_cost`), so that a million tests in one verification count as what they
are, not as one place. Places and cost are held from admission until the request is
answered (or abandoned); a request that would take either total over its capacity is
refused (503), and one that could never fit is too large (413).
Each admitted request gets a :class:`Ticket` that counts its verifications from waiting to
running to done, so that the queue depth and in-flight gauges stay exact, even when a
request times out while some of its verifications have not started.

Tickets are used from two threads (the server's loop admits and closes, the engine loop
starts and finishes verifications), so every count changes under one lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Saturated(Exception):
    """No room now: try again later (HTTP 503)."""


class TooLarge(Exception):
    """The request can never fit in the queue (HTTP 413)."""


#: Estimated bytes of one parsed JSON value (a Python object, or the model built on it).
VALUE_BYTES = 512
#: Estimated bytes a test holds until its request is answered (its result and records).
TEST_BYTES = 8192
_MB = 1024 * 1024


def request_cost(body_bytes: int, json_values: int, tests: int) -> int:
    """The memory a request may cost, in bytes: its body, its parsed values, its tests."""
    return body_bytes + json_values * VALUE_BYTES + tests * TEST_BYTES


class Admission:
    """Places for verifications, and memory for what they ask, in one process.

    Args:
        capacity: Verifications admitted at once, running or waiting.
        on_change: Called with (waiting, running) after every change (the gauges).
        memory_capacity: Bytes the admitted requests may cost at once (:func:`request_cost`).
    """

    def __init__(
        self,
        capacity: int,
        on_change: Callable[[int, int], None] | None = None,
        memory_capacity: int = 1024 * _MB,
    ) -> None:
        self.capacity = capacity
        self.memory_capacity = memory_capacity
        self._on_change = on_change
        self._lock = threading.Lock()
        self.admitted = 0
        self.cost = 0
        self.waiting = 0
        self.running = 0

    def check_cost(self, cost: int, what: str = "this request") -> None:
        """Refuse a cost that could never be admitted (before any work is spent on it).

        Raises:
            TooLarge: ``cost`` exceeds the memory capacity.
        """
        if cost > self.memory_capacity:
            raise TooLarge(
                f"{what} would cost about {cost / _MB:.0f} MB (body, JSON values and "
                f"tests); this server admits {self.memory_capacity / _MB:.0f} MB at once: "
                "split the batch"
            )

    def admit(self, count: int, cost: int = 0) -> Ticket:
        """Take ``count`` places and ``cost`` bytes.

        Raises:
            TooLarge: ``count`` or ``cost`` exceeds the capacity.
            Saturated: Not enough places or memory are free now.
        """
        if count > self.capacity:
            raise TooLarge(
                f"{count} verifications in one request; this server takes at most "
                f"{self.capacity} at once: split the batch"
            )
        self.check_cost(cost)
        with self._lock:
            if self.admitted + count > self.capacity:
                raise Saturated(
                    f"{self.admitted} of {self.capacity} places taken; {count} requested"
                )
            if self.cost + cost > self.memory_capacity:
                raise Saturated(
                    f"{self.cost / _MB:.0f} of {self.memory_capacity / _MB:.0f} MB taken; "
                    f"{cost / _MB:.0f} MB requested"
                )
            self.admitted += count
            self.cost += cost
            self.waiting += count
            self._changed()
        return Ticket(self, count, cost)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.waiting, self.running)


class Ticket:
    """The places of one admitted request."""

    def __init__(self, admission: Admission, count: int, cost: int = 0) -> None:
        self._admission = admission
        self.count = count
        self.cost = cost
        self._waiting = count
        self._running = 0
        self.closed = False

    def start(self) -> bool:
        """One verification starts; False if the request was abandoned (do not run it)."""
        a = self._admission
        with a._lock:
            if self.closed or self._waiting == 0:
                return False
            self._waiting -= 1
            self._running += 1
            a.waiting -= 1
            a.running += 1
            a._changed()
        return True

    def finish(self) -> None:
        """One started verification is done."""
        a = self._admission
        with a._lock:
            if self._running:
                self._running -= 1
                a.running -= 1
                a._changed()

    def drop(self, count: int) -> None:
        """``count`` waiting verifications will not run (duplicates of others in the batch)."""
        a = self._admission
        with a._lock:
            count = min(count, self._waiting)
            self._waiting -= count
            a.waiting -= count
            a._changed()

    def close(self) -> None:
        """The request is answered or abandoned: its places are free again.

        Verifications still running keep counting as running until they finish.
        """
        a = self._admission
        with a._lock:
            if self.closed:
                return
            self.closed = True
            a.waiting -= self._waiting
            self._waiting = 0
            a.admitted -= self.count
            a.cost -= self.cost
            a._changed()
