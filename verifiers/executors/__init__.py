"""Where a batch's verifications run: in this process, or on the workers of a Ray cluster.

An executor takes the validated, deduplicated work of a batch and gives back one result per
item, in order. :class:`LocalExecutor` is the engine of this process (the default).
:class:`RayExecutor` (:mod:`verifiers.executors.ray`) sends chunks of work to long-lived Ray
actors, each of which runs the same engine with its own local runtime, so warm sandboxes and
build caches live on in the actors from one batch to the next.

Validation (``SpecError``), deduplication and the :class:`~verifiers.ResultCache` stay on
the driver: a malformed item raises before anything is sent, identical work is sent once,
and a cached result is never sent at all. Ray is imported only when a Ray executor is used
(``pip install verifiers-sdk[ray]``). See ``docs/scaling.md``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

from verifiers.errors import SpecError
from verifiers.executors.base import Executor, LocalExecutor
from verifiers.executors.ray import RayExecutor, RayStats

#: What the ``executor=`` arguments accept (see :func:`resolve_executor`).
ExecutorArg = str | Executor | Mapping[str, Any] | None
LOCAL = LocalExecutor()
_shared: dict[str, Executor] = {}
_shared_lock = threading.Lock()


def resolve_executor(executor: ExecutorArg) -> Executor:
    """An executor from a name, a config mapping, an instance, or None (``local``).

    ``"ray"`` and mappings such as ``{"type": "ray", "num_workers": 8}`` (what a config file
    can hold) give one shared :class:`RayExecutor` per distinct configuration, so that its
    workers stay warm from one call to the next.

    Raises:
        SpecError: Unknown name, or a mapping with unknown or malformed keys.
    """
    if executor is None or executor == "local":
        return LOCAL
    if isinstance(executor, Executor):
        return executor
    if isinstance(executor, str):
        if executor == "ray":
            return _shared_ray({})
        raise SpecError(
            "executor", f"expected 'local', 'ray', a mapping or an Executor, got {executor!r}"
        )
    if isinstance(executor, Mapping):
        config = dict(executor)
        kind = config.pop("type", "ray")
        if kind == "local":
            if config:
                raise SpecError("executor", f"the local executor takes no settings: {config}")
            return LOCAL
        if kind != "ray":
            raise SpecError("executor.type", f"expected 'local' or 'ray', got {kind!r}")
        return _shared_ray(config)
    raise SpecError(
        "executor", f"expected a name, a mapping or an Executor, got {type(executor).__name__}"
    )


def _shared_ray(config: dict[str, Any]) -> Executor:
    key = json.dumps(config, sort_keys=True, default=repr)
    with _shared_lock:
        found = _shared.get(key)
        if found is None:
            try:
                found = _shared[key] = RayExecutor(**config)
            except TypeError as err:
                raise SpecError("executor", str(err)) from None
            except ValueError as err:
                raise SpecError("executor", str(err)) from None
        return found


__all__ = [
    "LOCAL",
    "Executor",
    "ExecutorArg",
    "LocalExecutor",
    "RayExecutor",
    "RayStats",
    "resolve_executor",
]
