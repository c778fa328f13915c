"""What one looping completion costs a GRPO group, with and without the time budgets.

A group of ``--group`` completions for one problem with ``--tests`` stdin/stdout tests
goes through the TRL reward function (``verifiers.integrations.trl``), as a trainer's
step would: all correct, or one of them ``while True: pass``. Each group runs under:

* ``budgets``: the defaults (``binary`` ends a run at its first failure; ``partial`` has
  a budget of ``2 * timeout_s``);
* ``no budgets``: the baseline, every test run to its own limit
  (``stop_on_failure=False``, ``budget_timeouts=None``), as before the budgets.

Prints the group's wall time with and without the budgets and their ratio, measured in this
process one after the other, and the tests the group ran and ran again (a timeout on a
saturated host is run again once), with / without the budgets.
Usage: ``.venv/bin/python bench/time_budgets.py [--tests N] [--group G] [--timeout S]``.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from verifiers.integrations.trl import reward_function

GOOD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
LOOP = "```python\nwhile True:\n    pass\n```"


def group_time(
    policy: str, members: list[str], tests: str, timeout: float, budgets: bool
) -> tuple[float, float, float]:
    """Wall seconds of one reward call, and the mean tests run and reruns per member."""
    reward = (
        reward_function("python", policy=policy, timeout_s=timeout)
        if budgets
        else _without_budgets(policy, timeout)
    )
    logged: dict[str, float] = {}
    started = time.perf_counter()
    reward(
        prompts=["p"] * len(members),
        completions=members,
        tests=[tests] * len(members),
        log_metric=logged.__setitem__,
    )
    elapsed = time.perf_counter() - started
    return elapsed, logged.get("verifiers/tests_run", 0.0), logged.get("verifiers/reruns", 0.0)


def _without_budgets(policy: str, timeout: float) -> Any:
    """The baseline reward: the same jobs, every test run (TRL's function has no switch)."""
    from verifiers._async import run_sync
    from verifiers.api import prepare_jobs
    from verifiers.executors import resolve_executor

    runner = resolve_executor(None)

    def reward(**kwargs: Any) -> list[float]:
        items = [
            {"language": "python", "completion": c, "tests": t, "stop_on_failure": False}
            for c, t in zip(kwargs["completions"], kwargs["tests"], strict=True)
        ]
        limits = {"timeout_s": timeout, "budget_timeouts": None}
        jobs = prepare_jobs(items, policy, limits, None, None, None)
        results = run_sync(runner.run(jobs))
        ran = sum(sum(not t.not_run for t in r.tests) for r in results) / len(results)
        kwargs["log_metric"]("verifiers/tests_run", ran)
        reruns = sum(t.rerun for r in results for t in r.tests) / len(results)
        kwargs["log_metric"]("verifiers/reruns", reruns)
        return [r.score for r in results]

    return reward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=10)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--json", default=None, help="write the numbers here too")
    args = parser.parse_args()
    tests = json.dumps({"inputs": ["1 2\n"] * args.tests, "outputs": ["3\n"] * args.tests})
    groups = {
        "all correct": [GOOD] * args.group,
        "one looping": [GOOD] * (args.group - 1) + [LOOP],
    }
    group_time("binary", [GOOD], tests, args.timeout, True)  # warm the sandboxes
    table = Table(
        title=f"GRPO group of {args.group}, {args.tests} tests, timeout_s={args.timeout:g}"
    )
    columns = ("policy", "group", "budgets s", "no budgets s", "ratio", "tests run", "reruns")
    for column in columns:
        table.add_column(column)
    report = []
    for policy in ("binary", "partial"):
        for name, members in groups.items():
            fast, ran, again = group_time(policy, members, tests, args.timeout, True)
            slow, ran_all, again_all = group_time(policy, members, tests, args.timeout, False)
            report.append(
                {"policy": policy, "group": name, "budgets_s": fast, "no_budgets_s": slow}
            )
            table.add_row(
                policy,
                name,
                f"{fast:.3f}",
                f"{slow:.3f}",
                f"{slow / fast:.1f}x",
                f"{ran * len(members):g} / {ran_all * len(members):g}",
                f"{again * len(members):g} / {again_all * len(members):g}",
            )
    Console().print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
