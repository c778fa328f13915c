"""Evaluation problems: the shared benchmarks by name, or a file of your own."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers import jsonio
from verifiers.errors import SpecError
from verifiers.integrations.data import SOURCES
from verifiers.rows import read_rows

#: Benchmarks known by name: the shared ones ``verifiers data prepare`` reads.
DATASETS = tuple(s for s in SOURCES if s != "eurus")


@dataclass(frozen=True)
class Problem:
    """One evaluation problem: the chat prompt a model answers and the tests of its answer."""

    task_id: str
    dataset: str
    language: str
    messages: list[dict[str, str]]
    tests: Any
    extra: dict[str, Any] = field(default_factory=dict)


def _from_row(row: dict[str, Any], dataset: str, index: int, where: str) -> Problem:
    """A problem from a row in veRL's layout or a plain one.

    veRL's: ``prompt`` messages, ``reward_model.ground_truth``, ``extra_info``; plain:
    ``prompt`` text or messages, ``tests``, ``language``.
    """
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        messages = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, list) and all(
        isinstance(m, dict) and "role" in m and "content" in m for m in prompt
    ):
        messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in prompt]
    else:
        raise SpecError(f"{where}.prompt", "expected a string or a list of chat messages")
    extra = row.get("extra_info") or {}
    if "reward_model" in row:
        truth = (row["reward_model"] or {}).get("ground_truth")
        tests = jsonio.loads(truth) if isinstance(truth, str) else truth
    else:
        tests = row.get("tests")
    if tests is None:
        raise SpecError(f"{where}.tests", "missing (or reward_model.ground_truth)")
    language = row.get("language") or extra.get("language")
    if not language:
        raise SpecError(f"{where}.language", "missing (or extra_info.language)")
    task_id = str(row.get("task_id") or extra.get("task_id") or f"{dataset}/{index}")
    return Problem(
        task_id, str(row.get("data_source") or dataset), str(language), messages, tests, extra
    )


def _read_file(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise SpecError("dataset", f"{path} is neither a known dataset nor a file")
    return read_rows(path)


def load_problems(
    dataset: str, datasets_dir: Path | None = None, limit: int | None = None
) -> list[Problem]:
    """The problems of a named benchmark, or of a JSONL(.gz)/parquet file.

    Named benchmarks use the prompts of ``verifiers data prepare`` (the same ones training
    data gets), read from ``datasets_dir`` (laid out like ``../shared/datasets``), by
    default from where ``verifiers.integrations.data.source_dataset`` finds them. A file
    holds rows in veRL's layout or plain rows with ``prompt``, ``tests``, ``language`` and
    optionally ``task_id``.

    Raises:
        SpecError: Unknown dataset, missing file or a malformed row (named).
    """
    from verifiers.integrations import data

    if limit is not None and limit < 1:
        raise SpecError("limit", f"expected a positive number of problems, got {limit}")
    if dataset in DATASETS:
        rows = data.load_source(dataset, datasets_dir)
        name = dataset
    else:
        path = Path(dataset)
        rows = _read_file(path)
        name = path.name.split(".")[0]
    problems = [_from_row(r, name, i, f"{name}[{i}]") for i, r in enumerate(rows)]
    if not problems:
        raise SpecError("dataset", f"{dataset} holds no problems")
    return problems[:limit] if limit else problems


__all__ = ["DATASETS", "Problem", "load_problems"]
