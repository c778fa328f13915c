"""The demo: HumanEval canonical solutions and deliberately broken variants.

Each variant is built from a real canonical solution so that the only
difference from a passing program is the defect the variant names; the demo
checks that every one gets the status it should.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from verifiers.results import Status


@dataclass(frozen=True)
class DemoItem:
    """One program of the demo and the status it must get."""

    task_id: str
    variant: str
    completion: str
    tests: dict[str, Any]
    expected: Status


def load_sample() -> list[dict[str, Any]]:
    """The HumanEval problems shipped with the package."""
    data = resources.files("verifiers.data").joinpath("humaneval_sample.jsonl.gz").read_bytes()
    return [json.loads(line) for line in gzip.decompress(data).decode().splitlines() if line]


def _fence(code: str) -> str:
    return f"Here is my solution.\n\n```python\n{code}\n```\n"


def _variants(problem: dict[str, Any]) -> dict[str, tuple[str, Status]]:
    """Broken versions of a canonical solution, each with the status it must get."""
    good = problem["prompt"] + problem["canonical_solution"]
    entry = problem["entry_point"]
    # Remove the colon that ends the entry point's signature.
    broken_syntax = re.sub(
        rf"(def {re.escape(entry)}\(.*?\)(?:\s*->\s*[^:]+)?):", r"\1", good, count=1, flags=re.S
    )
    override = f"\n\ndef {entry}(*args, **kwargs):\n"
    return {
        "canonical": (_fence(good), Status.PASSED),
        "wrong answer": (_fence(good + override + "    return None\n"), Status.FAILED),
        "syntax error": (_fence(broken_syntax), Status.SYNTAX_ERROR),
        "crash": (_fence(good + override + "    return [][1]\n"), Status.RUNTIME_ERROR),
        "infinite loop": (
            _fence(good + override + "    while True:\n        pass\n"),
            Status.TIMEOUT,
        ),
        "memory bomb": (
            _fence(good + override + "    return bytearray(1 << 40)\n"),
            Status.MEMORY_LIMIT,
        ),
        "exit(0) before the tests": (
            _fence("import sys\nsys.exit(0)\n" + good),
            Status.RUNTIME_ERROR,
        ),
        "always-equal object": (
            _fence(
                good
                + "\n\nclass _Anything:\n    def __eq__(self, other):\n        return True\n"
                + override
                + "    return _Anything()\n"
            ),
            Status.FAILED,
        ),
        "no code": ("I am not sure how to solve this one.", Status.NO_CODE),
    }


def demo_items(problems: int = 12) -> list[DemoItem]:
    """Canonical solutions of the first ``problems`` problems, each with one broken variant."""
    items = []
    sample = load_sample()[:problems]
    broken = [name for name in _variants(sample[0]) if name != "canonical"]
    for n, problem in enumerate(sample):
        tests = {"test": problem["test"], "entry_point": problem["entry_point"]}
        variants = _variants(problem)
        for name in ("canonical", broken[n % len(broken)]):
            completion, expected = variants[name]
            items.append(DemoItem(problem["task_id"], name, completion, tests, expected))
    return items
