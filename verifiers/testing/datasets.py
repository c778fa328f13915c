"""The public benchmark sets that the test suite and the benchmarks run on, found by name.

A set resolves to its full shared copy when one is present (``$VERIFIERS_SHARED_DATASETS``,
else ``../shared/datasets`` beside the repository), and otherwise to the few records of it
that ship in the package (``verifiers/data/datasets``; their sources, licenses and how they
were chosen are in its README.md). Both copies have the same layout and the same record
format, so whatever reads one reads the other, and a fresh clone needs nothing beside it.
:attr:`Dataset.origin` and ``str(dataset)`` say which copy was used and why.

Example::

    from verifiers.testing.datasets import dataset

    humaneval = dataset("humaneval")
    print(humaneval)  # humaneval: the bundled sample at ... (no shared copy: ...)
    for row in humaneval.rows():
        ...
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from verifiers.errors import SpecError

#: The environment variable naming the directory of the full shared sets.
ENV = "VERIFIERS_SHARED_DATASETS"
#: The records bundled with the package, laid out like the shared directory.
BUNDLED = Path(__file__).resolve().parents[1] / "data" / "datasets"
#: Where the shared sets are looked for without ``ENV``: beside the repository.
BESIDE_REPOSITORY = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"

#: Every set by directory name, with the stems of its JSON-lines files (``<stem>.jsonl.gz``).
SETS: dict[str, tuple[str, ...]] = {
    "humaneval": ("humaneval",),
    "mbpp_sanitized": ("mbpp_sanitized",),
    "humaneval_x": tuple(f"humaneval_x_{x}" for x in ("js", "go", "rust", "cpp", "java")),
    "leetcode_deepcoder": ("leetcode_deepcoder",),
    "codecontests_test_stdio": ("codecontests_test_stdio",),
    "codeelo_stdio": ("codeelo_stdio",),
    "kattis_examples": ("kattis_examples",),
    "kattis_validators": ("kattis_validators",),
    "spider_dev": ("spider_dev", "tables"),
    "structured_regex": ("structured_regex",),
    "nl_rx": ("nl_rx",),
    "library_checker": ("library_checker",),
}

Origin = Literal["shared", "bundled"]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file, gzip-compressed when its name ends in ``.gz``."""
    opener: Callable[..., IO[str]] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def shared_root() -> tuple[Path | None, str]:
    """The directory of the full shared sets, or None; and where it was looked for."""
    configured = os.environ.get(ENV)
    where = Path(configured) if configured else BESIDE_REPOSITORY
    label = f"{ENV}={where}" if configured else str(where)
    if where.is_dir():
        return where, label
    return None, f"{label} is not a directory"


@dataclass(frozen=True)
class Dataset:
    """One benchmark set as resolved: its directory, and which copy that is.

    Attributes:
        name: The set's directory name, a key of :data:`SETS`.
        path: The set's directory (``<root>/<name>``).
        origin: ``"shared"`` for the full shared copy, ``"bundled"`` for the package's sample.
        why: Where the shared copy was looked for (and, when bundled, why it was not used).
    """

    name: str
    path: Path
    origin: Origin
    why: str

    @property
    def root(self) -> Path:
        """A directory laid out like the shared one that holds this set (``path.parent``)."""
        return self.path.parent

    def file(self, stem: str | None = None) -> Path:
        """The path of one of the set's files, ``<stem>.jsonl.gz`` (default: the first stem).

        Raises:
            SpecError: ``stem`` is not one of the set's files.
            FileNotFoundError: The resolved copy lacks that file.
        """
        stems = SETS[self.name]
        stem = stem or stems[0]
        if stem not in stems:
            raise SpecError("stem", f"{self.name} has {', '.join(stems)}, not {stem!r}")
        path = self.path / f"{stem}.jsonl.gz"
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing from the {self.origin} copy of {self}")
        return path

    def rows(self, stem: str | None = None) -> list[dict[str, Any]]:
        """Every record of one of the set's files (see :meth:`file`), in the file's order."""
        return read_jsonl(self.file(stem))

    def database(self, db_id: str) -> Path:
        """The SQLite file of one database of a Spider-like set (``database/<id>/<id>.sqlite``).

        Raises:
            FileNotFoundError: The resolved copy has no such database.
        """
        path = self.path / "database" / db_id / f"{db_id}.sqlite"
        if not path.is_file():
            raise FileNotFoundError(f"no database {db_id!r} in {self}")
        return path

    def source(self) -> str:
        """Which copy this is, its root, and why (without the set's name)."""
        return self._copy_at(self.root)

    def _copy_at(self, where: Path) -> str:
        if self.origin == "shared":
            return f"the shared copy at {where}"
        return f"the bundled sample at {where} (no shared copy: {self.why})"

    def __str__(self) -> str:
        return f"{self.name}: {self._copy_at(self.path)}"


def dataset(name: str) -> Dataset:
    """Resolve a set by name: the shared copy when it holds the set, else the bundled sample.

    Raises:
        SpecError: ``name`` is not a known set.
    """
    if name not in SETS:
        raise SpecError("dataset", f"unknown set {name!r}; known: {', '.join(SETS)}")
    root, where = shared_root()
    if root is not None and (root / name).is_dir():
        return Dataset(name, root / name, "shared", where)
    why = where if root is None else f"{root / name} is not a directory"
    return Dataset(name, BUNDLED / name, "bundled", why)


def rows(
    name: str, stem: str | None = None, report: Callable[[str], object] | None = None
) -> list[dict[str, Any]]:
    """Every record of one file of a set, resolved by :func:`dataset`.

    Args:
        name: The set.
        stem: The file (default: the set's first, see :meth:`Dataset.file`).
        report: Called with a line saying which copy the records come from, and how many.
    """
    found = dataset(name)
    records = found.rows(stem)
    if report is not None:
        report(f"{found} [{found.file(stem).name}: {len(records)} records]")
    return records


def summary() -> str:
    """Which copy each set resolves to, one line per copy (for test and benchmark reports)."""
    by_source: dict[str, list[str]] = {}
    for name in SETS:
        by_source.setdefault(dataset(name).source(), []).append(name)
    return "\n".join(f"{where}: {', '.join(names)}" for where, names in by_source.items())


__all__ = [
    "BUNDLED",
    "ENV",
    "SETS",
    "Dataset",
    "dataset",
    "read_jsonl",
    "rows",
    "shared_root",
    "summary",
]
