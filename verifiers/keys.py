"""Content keys: the one way the SDK hashes what a result or an artefact depends on.

Build artefacts, deduplication inside a batch, the result cache and the Docker images are
all keyed by a hash of their inputs. They share :func:`content_key`, so that two inputs
that differ in any part (even where one part ends and the next begins) never share a key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from verifiers.jsonio import dumps

#: The SDK's version; every result cache key carries it.
SDK_VERSION = "0.1.0"


def content_key(*parts: str | bytes | None) -> str:
    """A SHA-256 hex digest of ``parts``, each one delimited (``None`` hashes as absent)."""
    h = hashlib.sha256()
    for part in parts:
        if part is None:
            h.update(b"n;")
            continue
        data = part.encode("utf-8", errors="surrogatepass") if isinstance(part, str) else part
        # Length-prefixed: no choice of parts can imitate another's boundaries.
        h.update(b"%c%d:" % (115 if isinstance(part, str) else 98, len(data)))
        h.update(data)
    return h.hexdigest()


def build_key(
    kind: str, argv: Sequence[str], files: Mapping[str, bytes], *extra: str | bytes | None
) -> str:
    """The content key of a build: its kind, command line, files (raw bytes) and ``extra``.

    Every part is length-prefixed and the files are hashed as the bytes the build reads,
    never a decoding of them: two sources that differ in any byte (an invalid UTF-8 byte in
    a string literal included) never share a build, and so never share an artefact.
    """
    parts: list[str | bytes | None] = [kind, str(len(argv)), *argv, str(len(files))]
    for path in sorted(files):
        parts += [path, files[path]]
    return content_key(*parts, *extra)


def json_key(value: Any) -> str:
    """The content key of a JSON-shaped value (dict keys in sorted order)."""
    return content_key(dumps(value, sort_keys=True, default=repr))
