"""Reading rows of data files: the one reader of JSON Lines (optionally gzipped) and parquet.

The CLI's inputs, evaluation outputs and problems, and dataset preparation all read rows
through :func:`read_rows`, so every one accepts the same formats and reports a malformed
line the same way (a :class:`~verifiers.errors.SpecError` naming the file and line).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from verifiers import jsonio
from verifiers.errors import SpecError


def is_parquet(path: Path) -> bool:
    """Whether ``path`` names a parquet file (``.parquet``, ``.pq``)."""
    return path.suffix.lower() in (".parquet", ".pq")


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL (optionally ``.gz``) or parquet file.

    Raises:
        SpecError: The file is missing, or a line is not a JSON object (naming the line).
    """
    if not path.is_file():
        raise SpecError(str(path), "no such file")
    if is_parquet(path):
        import pyarrow.parquet as pq

        return list(pq.read_table(path).to_pylist())
    rows = []
    opener: Callable[..., IO[str]] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = jsonio.loads(line)
            except json.JSONDecodeError as err:
                raise SpecError(f"{path}:{number}", f"not valid JSON ({err.msg})") from None
            if not isinstance(row, dict):
                raise SpecError(f"{path}:{number}", "each line must be a JSON object")
            rows.append(row)
    return rows
