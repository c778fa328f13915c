"""Regex equivalence: the flavour-exact automata against the interegular baseline.

Workload: the verified Python gold patterns of StructuredRegex, each compared with itself
and with a perturbation (one bounded repetition count plus one), in ``fullmatch`` and
``search`` mode. Both deciders run in this process, on the host (the sandbox is not part
of what is measured): the automata of ``verifiers.languages._regex_harness`` (what the
equivalence test runs now), and the interegular construction the harness used before
(``interegular.parse_pattern(...).to_fsm()``, symmetric difference, breadth-first
witness), which knew no anchors and an ASCII-only idea of the classes.

Columns: pairs decided by the automaton (the rest fall back to the examples), witnesses
that are wrong (the real ``re`` engine does not tell the two patterns apart on them), and
the time per pair.

Usage: ``.venv/bin/python bench/regex_equivalence.py [--records N]``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from verifiers.languages import _regex_harness as harness
from verifiers.testing import datasets


def pairs(records: int) -> list[tuple[str, str]]:
    rows = datasets.rows("structured_regex", report=print)
    out = []
    for row in [r for r in rows if r["regex_python_verified"]][:records]:
        gold = row["regex_python"]
        out.append((gold, gold))
        found = re.search(r"\{(\d+)\}", gold)
        if found:
            bumped = "{" + str(int(found.group(1)) + 1) + "}"
            out.append((gold[: found.start()] + bumped + gold[found.end() :], gold))
    return out


def automaton(candidate: str, gold: str, mode: str) -> dict[str, Any]:
    spec = {"mode": mode, "flavor": "python", "cases": [], "gold": gold}
    flavour = harness.SreFlavour("python")
    return harness.equivalence(candidate, gold, spec, flavour, time.monotonic() + 30)


def interegular_baseline(candidate: str, gold: str, mode: str) -> dict[str, Any]:
    import interegular

    def wrap(pattern: str) -> str:
        if mode == "search":
            return f"[\\s\\S]*(?:{pattern})[\\s\\S]*"
        return f"(?:{pattern})"

    try:
        mine = interegular.parse_pattern(wrap(candidate)).to_fsm()
        theirs = interegular.parse_pattern(wrap(gold)).to_fsm()
    except Exception as err:
        return {"undecidable": type(err).__name__}
    difference = mine.symmetric_difference(theirs)  # type: ignore[no-untyped-call]
    if difference.initial in difference.finals:
        return {"equivalent": False, "witness": ""}
    parent: dict[Any, tuple[Any, str] | None] = {difference.initial: None}
    queue = [difference.initial]
    symbols = {i: s if isinstance(s, str) else "\u00a7" for s, i in difference.alphabet.items()}
    while queue:
        state = queue.pop(0)
        for index, target in difference.map.get(state, {}).items():
            if target in parent:
                continue
            parent[target] = (state, symbols.get(index, "\u00a7"))
            if target in difference.finals:
                chars, node = [], target
                while (step := parent[node]) is not None:
                    node, char = step
                    chars.append(char)
                return {"equivalent": False, "witness": "".join(reversed(chars))}
            queue.append(target)
    return {"equivalent": True}


def wrong(record: dict[str, Any], candidate: str, gold: str, mode: str) -> bool:
    """A witness on which the real engine does not tell the patterns apart."""
    if "witness" not in record or "undecidable" in record:
        return False
    text = record["witness"]
    method = {"fullmatch": re.fullmatch, "search": re.search}[mode]
    return (method(candidate, text) is None) == (method(gold, text) is None)


def measure(
    decide: Callable[[str, str, str], dict[str, Any]], work: list[tuple[str, str]], mode: str
) -> dict[str, float]:
    times, decided, wrong_witnesses, different = [], 0, 0, 0
    for candidate, gold in work:
        started = time.perf_counter()
        record = decide(candidate, gold, mode)
        times.append(time.perf_counter() - started)
        if "undecidable" not in record:
            decided += 1
            different += not record["equivalent"]
        wrong_witnesses += wrong(record, candidate, gold, mode)
    return {
        "decided": decided,
        "different": different,
        "wrong": wrong_witnesses,
        "median_ms": statistics.median(times) * 1000,
        "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))] * 1000,
        "total_s": sum(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=300)
    args = parser.parse_args()
    work = pairs(args.records)
    table = Table(title=f"regex equivalence: {len(work)} pairs of StructuredRegex patterns")
    for column in ("mode", "decider", "decided", "found different", "wrong witnesses"):
        table.add_column(column)
    for column in ("median ms", "p95 ms", "total s", "time vs baseline"):
        table.add_column(column, justify="right")
    for mode in ("fullmatch", "search"):
        base = measure(interegular_baseline, work, mode)
        ours = measure(automaton, work, mode)
        for name, row in (("interegular (before)", base), ("automata (now)", ours)):
            table.add_row(
                mode,
                name,
                f"{row['decided']:.0f}/{len(work)}",
                f"{row['different']:.0f}",
                f"{row['wrong']:.0f}",
                f"{row['median_ms']:.2f}",
                f"{row['p95_ms']:.2f}",
                f"{row['total_s']:.2f}",
                f"{row['total_s'] / base['total_s']:.2f}x",
            )
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
