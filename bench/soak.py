"""Soak test: many mixed verifications in one process, checking that nothing leaks.

Runs ``--n`` verifications through ``verifiers.score_batch`` in consecutive batches of
``--batch``. The mix is what a reward loop sees: correct, wrong and crashing programs,
time-outs (0.5 s limits, so the soak stays fast), memory hogs, output and file floods,
syntax and compile errors, early exits, prose without code, programs that leave children or
threads behind or run out of file descriptors, hostile programs (fork bombs, a memory
bomb of several processes, a program that meddles with PID 1's limits, affinity, priority,
scheduling and signals, output on every stream at the cap, descriptors held open),
JavaScript, SQL and regex items (with their
own errors and time-outs), and reference solutions from the public benchmark sets (HumanEval,
MBPP, HumanEval-X JavaScript, Spider, StructuredRegex: the shared copy when present, else the
bundled sample, ``verifiers.testing.datasets``; the run says which).
Items are made distinct with a unique comment or test, so deduplication hides no work;
about 5% are exact copies of an earlier item of the same batch (verified once).

Every result is accounted for: one per item, none missing, each with the class of status
its kind must get (a reference solution passes, a syntax error is ``syntax_error``...);
any ``sandbox_error`` fails the soak.

Resources are measured at checkpoints (before, after the warm-up batch, every
``--checkpoint-every`` batches, at the end), each after ``verifiers.close_idle_sandboxes()``:
open fds of this process, its descendant processes, sandbox processes (``bwrap`` or the
agent) among them or orphaned to PID 1 since the soak began, ``verifiers*`` entries in the
temporary directory (``$TMPDIR``, else ``/tmp``) and ``/dev/shm``, this process's sandbox
cgroups, and its RSS. The warm sandboxes alive just before closing them are reported but
not judged (up to one idle sandbox per CPU is normal, more while they reset).

Exit status 1, with the reasons, when fds, processes, temporary entries or cgroups grew at all from
the warm-up checkpoint to the last one, when RSS grew more than ``--rss-growth-mib``, when a
result is missing or a ``sandbox_error``, or when a status was not the expected one; else 0.
Usage::

    .venv/bin/python bench/soak.py [--n 10000] [--max-seconds 600]
        [--batch 200] [--checkpoint-every 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import verifiers
from verifiers.runtimes import cgroups
from verifiers.testing import datasets
from verifiers.testing.resources import processes, rss_mib, start_ticks, tmp_entries

console = Console(width=150)

# --- the workload ----------------------------------------------------------------------------

Item = dict[str, Any]
FAST = {"timeout_s": 0.5}  # time-outs cost their limit: keep them short
ADD_JS = {"test": "console.assert(add(1, 2) === 3);\nconsole.assert(add(-4, 4) === 0);"}
SUM_IO = {"inputs": ["1 2\n", "30 12\n"], "outputs": ["3\n", "42\n"]}


def _add_tests(rng: random.Random, n: int = 3) -> dict[str, Any]:
    pairs = [(rng.randint(-999, 999), rng.randint(-999, 999)) for _ in range(n)]
    return {"test_list": [f"assert add({a}, {b}) == {a + b}" for a, b in pairs]}


def _py(body: str, tests: Any, i: int, **extra: Any) -> Item:
    # The trailing comment makes every program distinct without changing its behaviour.
    return {"language": "python", "completion": f"{body}\n# soak {i}\n", "tests": tests, **extra}


def _js(body: str, tests: Any, i: int, **extra: Any) -> Item:
    return {
        "language": "javascript",
        "completion": f"{body}\n// soak {i}\n",
        "tests": tests,
        **extra,
    }


def _sql_tests(rows: int) -> dict[str, Any]:
    return {
        "database": {
            "schema": "CREATE TABLE t(x INT, y TEXT);",
            "inserts": [f"INSERT INTO t VALUES ({k}, 'v{k}')" for k in range(rows)],
        },
        "gold_query": "SELECT x, y FROM t WHERE x % 2 = 0",
    }


@dataclass
class Data:
    """Reference solutions from the benchmark sets."""

    humaneval: list[dict[str, Any]]
    mbpp: list[dict[str, Any]]
    humaneval_js: list[dict[str, Any]]
    spider: list[dict[str, Any]]
    spider_set: datasets.Dataset  # where the Spider databases are
    regexes: list[dict[str, Any]]


def load(name: str, stem: str | None = None) -> list[dict[str, Any]]:
    return datasets.rows(name, stem, report=console.print)


def load_data() -> Data:
    # HumanEval-X JavaScript 112 and 155 fail their own tests, 162 needs an npm package.
    broken_js = {"JavaScript/112", "JavaScript/155", "JavaScript/162"}
    return Data(
        humaneval=load("humaneval"),
        mbpp=load("mbpp_sanitized"),
        humaneval_js=[
            r for r in load("humaneval_x", "humaneval_x_js") if r["task_id"] not in broken_js
        ],
        spider=load("spider_dev"),
        spider_set=datasets.dataset("spider_dev"),
        regexes=[r for r in load("structured_regex") if r["regex_python_verified"]],
    )


@dataclass(frozen=True)
class Kind:
    """One kind of item: how to make the i-th one, and the statuses it may get."""

    name: str
    weight: float
    expect: frozenset[str]
    make: Callable[[int, random.Random, Data], Item]


def _humaneval(i: int, rng: random.Random, data: Data) -> Item:
    p = rng.choice(data.humaneval)
    tests = {"test": p["test"], "entry_point": p["entry_point"]}
    return _py(p["prompt"] + p["canonical_solution"], tests, i)


def _humaneval_broken(i: int, rng: random.Random, data: Data) -> Item:
    p = rng.choice(data.humaneval)
    tests = {"test": p["test"], "entry_point": p["entry_point"]}
    return _py(p["prompt"] + "    return None\n", tests, i)


def _mbpp(i: int, rng: random.Random, data: Data) -> Item:
    p = rng.choice(data.mbpp)
    return _py(p["code"], {"test_list": p["test_list"], "test_imports": p["test_imports"]}, i)


def _humaneval_js(i: int, rng: random.Random, data: Data) -> Item:
    p = rng.choice(data.humaneval_js)
    return _js(p["prompt"] + p["canonical_solution"], {"test": p["test"]}, i)


def _spider(i: int, rng: random.Random, data: Data) -> Item:
    row = rng.choice(data.spider)
    db = data.spider_set.database(row["db_id"])
    tests = {
        "database": str(db),
        "expected_rows": row["gold_result"],
        "ordered": row["order_matters"],
    }
    return {"language": "sql", "completion": f"{row['query']} -- soak {i}", "tests": tests}


def _structured_regex(i: int, rng: random.Random, data: Data) -> Item:
    row = rng.choice(data.regexes)
    # (?#...) is a comment in Python's re: a distinct pattern that accepts the same strings
    return {
        "language": "regex",
        "completion": f"{row['regex_python']}(?#soak {i})",
        "tests": {"positive": row["pos_examples"], "negative": row["neg_examples"]},
    }


def _kinds() -> list[Kind]:
    def k(name: str, weight: float, expect: str, make: Callable[..., Item]) -> Kind:
        return Kind(name, weight, frozenset(expect.split("|")), make)

    add = "def add(a, b):\n    return a + b\n"
    return [
        # Python, synthetic
        k("py_pass_assert", 14, "passed", lambda i, r, d: _py(add, _add_tests(r), i)),
        k(
            "py_pass_stdio",
            8,
            "passed",
            lambda i, r, d: _py("print(sum(map(int, input().split())))", SUM_IO, i),
        ),
        k(
            "py_wrong",
            8,
            "failed",
            lambda i, r, d: _py("def add(a, b):\n    return a - b + 1", _add_tests(r), i),
        ),
        k(
            "py_crash",
            4,
            "runtime_error",
            lambda i, r, d: _py("def add(a, b):\n    return [][a]", _add_tests(r), i),
        ),
        k(
            "py_recursion",
            2,
            "runtime_error",
            lambda i, r, d: _py("def add(a, b):\n    return add(a, b)", _add_tests(r), i),
        ),
        k(
            "py_timeout",
            2,
            "timeout",
            lambda i, r, d: _py(
                "def add(a, b):\n    while True:\n        pass", _add_tests(r, 1), i, limits=FAST
            ),
        ),
        k(
            "py_sleep",
            1,
            "timeout",
            lambda i, r, d: _py("import time\ntime.sleep(30)", SUM_IO, i, limits=FAST),
        ),
        k(
            "py_memory",
            2,
            "memory_limit",
            lambda i, r, d: _py(
                "def add(a, b):\n    x = bytearray(1 << 30)\n    return a + b",
                _add_tests(r),
                i,
                limits={"timeout_s": 2, "memory_mb": 256},
            ),
        ),
        k(
            "py_memory_grow",
            1,
            "memory_limit",
            lambda i, r, d: _py(
                "x = []\nwhile True:\n    x.append(' ' * 10**6)",
                SUM_IO,
                i,
                limits={"timeout_s": 2, "memory_mb": 128},
            ),
        ),
        k(
            "py_stdout_flood",
            2,
            "output_limit",
            lambda i, r, d: _py(
                "while True:\n    print('x' * 4096)",
                SUM_IO,
                i,
                limits={"timeout_s": 2, "max_output_bytes": 65536},
            ),
        ),
        k(
            "py_stderr_flood",
            1,
            "output_limit",
            lambda i, r, d: _py(
                "import sys\ndef add(a, b):\n    while True:\n        sys.stderr.write('e' * 4096)",
                _add_tests(r),
                i,
                limits={"timeout_s": 2, "max_output_bytes": 65536},
            ),
        ),
        k(
            "py_file_flood",
            1,
            "output_limit",
            lambda i, r, d: _py(
                "def add(a, b):\n    with open('big', 'wb') as f:\n"
                "        f.write(b'x' * (3 << 20))\n    return a + b",
                _add_tests(r),
                i,
                limits={"max_file_mb": 1},
            ),
        ),
        k(
            "py_syntax",
            4,
            "syntax_error",
            lambda i, r, d: _py("def add(a, b:\n    return a + b", _add_tests(r), i),
        ),
        k("py_compile", 1, "compile_error", lambda i, r, d: _py("return 1", SUM_IO, i)),
        k(
            "py_sys_exit",
            2,
            "runtime_error",
            lambda i, r, d: _py(add + "import sys\nsys.exit(0)", _add_tests(r), i),
        ),
        k(
            "py_os_exit",
            1,
            "runtime_error",
            lambda i, r, d: _py("import os\ndef add(a, b):\n    os._exit(0)", _add_tests(r), i),
        ),
        k(
            "py_exit_code",
            1,
            "runtime_error",
            lambda i, r, d: _py("import sys\nsys.exit(3)", SUM_IO, i),
        ),
        k(
            "py_no_code",
            1,
            "no_code",
            lambda i, r, d: {
                "language": "python",
                "completion": f"I am sorry, I cannot help with request number {i} today.",
                "tests": _add_tests(r),
            },
        ),
        # Programs that leave something behind: the sandbox must clean it all up.
        k(
            "py_child_left",
            1,
            "passed",
            lambda i, r, d: _py(
                "import os, time\ndef add(a, b):\n    if os.fork() == 0:\n"
                "        time.sleep(60)\n    return a + b",
                _add_tests(r),
                i,
            ),
        ),
        k(
            "py_daemon_left",
            1,
            "passed",
            lambda i, r, d: _py(
                "import subprocess\ndef add(a, b):\n"
                "    subprocess.Popen(['sleep', '60'], start_new_session=True)\n    return a + b",
                _add_tests(r, 1),
                i,
            ),
        ),
        k(
            "py_thread_left",
            1,
            "passed",
            lambda i, r, d: _py(
                "import threading, time\ndef add(a, b):\n"
                "    threading.Thread(target=time.sleep, args=(60,)).start()\n    return a + b",
                _add_tests(r),
                i,
            ),
        ),
        k(
            "py_fd_hog",
            1,
            "runtime_error",
            lambda i, r, d: _py(
                "def add(a, b):\n    fs = [open('/dev/null') for _ in range(10000)]\n"
                "    return a + b",
                _add_tests(r),
                i,
            ),
        ),
        # Hostile programs (issue 17's battery): each bounded by its sandbox, never another's.
        k(
            "py_fork_bomb",
            1,
            "timeout|runtime_error|memory_limit",
            lambda i, r, d: _py(
                "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
                "        pass",
                SUM_IO,
                i,
                limits={"timeout_s": 1, "max_processes": 16},
            ),
        ),
        k(
            "py_memory_bomb_procs",
            0.5,
            "memory_limit",
            lambda i, r, d: _py(
                "import os, time\nfor _ in range(7):\n    if os.fork() == 0:\n        break\n"
                "x = bytearray(120 << 20)\nfor j in range(0, len(x), 4096):\n    x[j] = 1\n"
                "time.sleep(5)",
                SUM_IO,
                i,
                limits={"timeout_s": 4, "memory_mb": 128, "disk_mb": 16, "max_processes": 16},
            ),
        ),
        k(
            "py_meddle_pid1",
            1,
            "passed",
            lambda i, r, d: _py(
                "import os, resource, signal\nfor f in (\n"
                "    lambda: resource.prlimit(1, resource.RLIMIT_NOFILE, (3, 3)),\n"
                "    lambda: resource.prlimit(1, resource.RLIMIT_NPROC, (1, 1)),\n"
                "    lambda: os.sched_setaffinity(1, {0}),\n"
                "    lambda: os.setpriority(os.PRIO_PROCESS, 1, 19),\n"
                "    lambda: os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0)),\n"
                "    lambda: os.kill(1, signal.SIGSTOP),\n"
                "):\n    try:\n        f()\n    except OSError:\n        pass\n" + add,
                _add_tests(r),
                i,
            ),
        ),
        # At the cap on stdout, stderr and the result channel: within its rights (the tests
        # decide), and the host keeps a bounded part of each.
        k(
            "py_output_amplify",
            0.5,
            "passed",
            lambda i, r, d: _py(
                "import os, sys\nchunk = b'x' * (1 << 20)\nfor fd in (1, 2, 3):\n"
                "    try:\n        os.write(fd, chunk)\n    except OSError:\n        pass\n" + add,
                _add_tests(r),
                i,
                limits={"max_output_bytes": 1 << 20},
            ),
        ),
        k(
            "py_descriptor_leak",
            0.5,
            "passed",
            lambda i, r, d: _py(
                "import os, socket\nkeep = [os.pipe() for _ in range(50)]\n"
                "keep += [socket.socketpair() for _ in range(25)]\n" + add,
                _add_tests(r),
                i,
            ),
        ),
        # Python, reference solutions (and a broken variant) from the datasets
        k("humaneval", 10, "passed", _humaneval),
        k("humaneval_broken", 3, "failed|runtime_error", _humaneval_broken),
        k("mbpp", 10, "passed", _mbpp),
        # JavaScript
        k(
            "js_pass",
            3,
            "passed",
            lambda i, r, d: _js("function add(a, b) { return a + b; }", ADD_JS, i),
        ),
        k(
            "js_wrong",
            1,
            "failed",
            lambda i, r, d: _js("function add(a, b) { return a * b; }", ADD_JS, i),
        ),
        k(
            "js_crash",
            1,
            "runtime_error",
            lambda i, r, d: _js("function add(a, b) { throw new Error('no'); }", ADD_JS, i),
        ),
        k(
            "js_timeout",
            0.5,
            "timeout",
            lambda i, r, d: _js("function add(a, b) { while (true) {} }", ADD_JS, i, limits=FAST),
        ),
        k(
            "js_syntax",
            1,
            "syntax_error",
            lambda i, r, d: _js("function add(a, b { return a + b; }", ADD_JS, i),
        ),
        k(
            "js_stdio",
            1,
            "passed",
            lambda i, r, d: _js(
                "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(' ')"
                ".map(Number);\nconsole.log(a + b);",
                SUM_IO,
                i,
            ),
        ),
        k("humaneval_js", 3, "passed", _humaneval_js),
        # SQL
        k(
            "sql_pass",
            2,
            "passed",
            lambda i, r, d: {
                "language": "sql",
                "completion": f"SELECT x, y FROM t WHERE x % 2 = 0 -- soak {i}",
                "tests": _sql_tests(r.randint(1, 20)),
            },
        ),
        k(
            "sql_wrong",
            1,
            "failed",
            lambda i, r, d: {
                "language": "sql",
                "completion": f"SELECT x, y FROM t WHERE x % 2 = 1 -- soak {i}",
                "tests": _sql_tests(r.randint(2, 20)),
            },
        ),
        k(
            "sql_syntax",
            0.5,
            "syntax_error",
            lambda i, r, d: {
                "language": "sql",
                "completion": f"SELEC x FROM t -- soak {i}",
                "tests": _sql_tests(3),
            },
        ),
        k(
            "sql_compile",
            0.5,
            "compile_error",
            lambda i, r, d: {
                "language": "sql",
                "completion": f"DELETE FROM t -- soak {i}"
                if i % 2
                else f"SELECT z FROM t -- soak {i}",
                "tests": _sql_tests(3),
            },
        ),
        k(
            "sql_timeout",
            0.3,
            "timeout",
            lambda i, r, d: {
                "language": "sql",
                "completion": "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
                f"SELECT count(*) FROM c -- soak {i}",
                "tests": _sql_tests(3),
                "limits": FAST,
            },
        ),
        k("spider", 3, "passed", _spider),
        # Regular expressions
        k(
            "regex_pass",
            1,
            "passed",
            lambda i, r, d: {
                "language": "regex",
                "completion": rf"ab\d+(?#soak {i})",
                "tests": {"positive": [f"ab{i}"], "negative": ["abd", f"b{i}"]},
            },
        ),
        k(
            "regex_wrong",
            0.5,
            "failed",
            lambda i, r, d: {
                "language": "regex",
                "completion": rf"ab.+(?#soak {i})",
                "tests": {"positive": [f"ab{i}"], "negative": ["abd"]},
            },
        ),
        k(
            "regex_syntax",
            0.5,
            "syntax_error",
            lambda i, r, d: {
                "language": "regex",
                "completion": f"ab(c{i}",
                "tests": {"positive": ["abc"], "negative": ["abd"]},
            },
        ),
        k(
            "regex_redos",
            0.3,
            "timeout",
            lambda i, r, d: {
                "language": "regex",
                "completion": f"(a+)+$(?#soak {i})",
                "tests": {"positive": ["aaa"], "negative": ["a" * 40 + "b"]},
                "limits": FAST,
            },
        ),
        k("structured_regex", 3, "passed", _structured_regex),
    ]


KINDS = _kinds()
DUPLICATE_RATE = 0.05


def make_batch(
    start: int, size: int, rng: random.Random, data: Data
) -> list[tuple[Kind, Item, bool]]:
    """Items ``start .. start+size``; the very first batch holds one of every kind."""
    out: list[tuple[Kind, Item, bool]] = []
    weights = [kind.weight for kind in KINDS]
    for i in range(start, start + size):
        if out and rng.random() < DUPLICATE_RATE:
            kind, item, _ = rng.choice(out)
            out.append((kind, item, True))  # the same dict: verified once with its original
            continue
        kind = KINDS[i] if i < len(KINDS) else rng.choices(KINDS, weights)[0]
        out.append((kind, kind.make(i, rng, data), False))
    return out


# --- resources -------------------------------------------------------------------------------


@dataclass
class Checkpoint:
    label: str
    items: int
    elapsed_s: float
    fds: int
    procs: int
    sandbox_procs: int
    orphans: int
    tmp_entries: int
    cgroups: int
    rss_mib: float
    init_zombies: int
    warm_sandboxes: int  # sandbox processes alive before closing the idle ones (not judged)
    warm_procs: int


JUDGED = ("fds", "procs", "sandbox_procs", "orphans", "tmp_entries", "cgroups")


def checkpoint(label: str, items: int, started: float, since_ticks: int, tmp: Path) -> Checkpoint:
    warm = processes(since_ticks)
    verifiers.close_idle_sandboxes()  # idle warm sandboxes are a cache, not a leak
    gc.collect()
    cold = processes(since_ticks)
    return Checkpoint(
        label=label,
        items=items,
        elapsed_s=time.perf_counter() - started,
        fds=len(os.listdir("/proc/self/fd")),
        procs=cold.descendants,
        sandbox_procs=cold.sandboxes,
        orphans=cold.orphans,
        tmp_entries=tmp_entries(tmp),
        cgroups=cgroups.live_groups(),
        rss_mib=rss_mib(),
        init_zombies=cold.init_zombies,
        warm_sandboxes=warm.sandboxes,
        warm_procs=warm.descendants,
    )


def checkpoint_table(points: list[Checkpoint], base: Checkpoint) -> Table:
    t = Table(title="Resources after close_idle_sandboxes() (growth: last minus warm-up)")
    columns = {
        "checkpoint": "label",
        "items": "items",
        "s": "elapsed_s",
        "fds": "fds",
        "procs": "procs",
        "sandbox procs": "sandbox_procs",
        "orphans": "orphans",
        "tmp entries": "tmp_entries",
        "cgroups": "cgroups",
        "RSS MiB": "rss_mib",
        "init zombies*": "init_zombies",
        "warm sandbox procs*": "warm_sandboxes",
        "warm procs*": "warm_procs",
    }
    for name in columns:
        t.add_column(name, justify="left" if name == "checkpoint" else "right")

    def cell(value: Any) -> str:
        return f"{value:.1f}" if isinstance(value, float) else str(value)

    for point in points:
        t.add_row(*(cell(getattr(point, a)) for a in columns.values()))
    last = points[-1]
    t.add_row(
        "growth",
        "",
        "",
        *(
            f"{getattr(last, a) - getattr(base, a):+.1f}"
            if a == "rss_mib"
            else f"{getattr(last, a) - getattr(base, a):+d}"
            for a in list(columns.values())[3:]
        ),
        style="bold",
    )
    t.caption = "* reported, not judged"
    return t


# --- the soak --------------------------------------------------------------------------------


@dataclass
class Tally:
    items: int = 0
    results: int = 0
    missing: int = 0
    duplicates: int = 0
    distinct: int = 0
    tests_run: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    unexpected: int = 0
    examples: list[str] = field(default_factory=list)

    def account(self, batch: list[tuple[Kind, Item, bool]], results: list[Any]) -> None:
        self.items += len(batch)
        self.results += len(results)
        self.distinct += len({json.dumps(item, sort_keys=True) for _, item, _ in batch})
        for n, (kind, _, duplicate) in enumerate(batch):
            result = results[n] if n < len(results) else None
            self.duplicates += duplicate
            if not isinstance(result, verifiers.Result):
                self.missing += 1
                self._example(f"item {self.items - len(batch) + n} ({kind.name}): no result")
                continue
            status = result.status.value
            self.statuses[status] += 1
            self.by_kind.setdefault(kind.name, Counter())[status] += 1
            self.tests_run += 0 if duplicate else len(result.tests)
            if status not in kind.expect or (status == "passed") != (result.score == 1.0):
                self.unexpected += 1
                first = (result.feedback or "").strip().splitlines()[:1]
                self._example(
                    f"item {self.items - len(batch) + n} ({kind.name}): {status} "
                    f"{result.passed}/{result.total}, expected {'|'.join(sorted(kind.expect))}"
                    f"; {first[0][:160] if first else ''}"
                )

    def _example(self, text: str) -> None:
        if len(self.examples) < 20:
            self.examples.append(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="verifications in all")
    parser.add_argument("--batch", type=int, default=200, help="items per score_batch call")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="start no batch after this many seconds (two batches always run)",
    )
    parser.add_argument("--checkpoint-every", type=int, default=5, help="batches between")
    parser.add_argument("--concurrency", type=int, default=None, help="default: one per core")
    parser.add_argument("--rss-growth-mib", type=float, default=64.0, help="allowed RSS growth")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    if args.n < 2 * args.batch:
        parser.error("--n must cover at least two batches (warm-up, then one measured)")

    data = load_data()
    rng = random.Random(args.seed)
    tmp = Path(tempfile.gettempdir())
    since_ticks = start_ticks()
    started = time.perf_counter()
    points = [checkpoint("before", 0, started, since_ticks, tmp)]
    tally = Tally()
    verify_s = 0.0
    batches = -(-args.n // args.batch)
    stopped_early = False
    crashed = ""
    for b in range(batches):
        elapsed = time.perf_counter() - started
        if b >= 2 and args.max_seconds is not None and elapsed > args.max_seconds:
            stopped_early = True
            break
        size = min(args.batch, args.n - b * args.batch)
        batch = make_batch(b * args.batch, size, rng, data)
        t0 = time.perf_counter()
        try:
            results = verifiers.score_batch(
                [item for _, item, _ in batch], max_concurrency=args.concurrency
            )
        except Exception as err:  # the SDK must not raise for code it runs: report, then stop
            console.print_exception()
            crashed = f"score_batch raised in batch {b + 1}: {err!r}"
            results = []
        verify_s += time.perf_counter() - t0
        tally.account(batch, results)
        last = b == batches - 1 or bool(crashed)
        if b == 0 or last or b % args.checkpoint_every == 0:
            label = "warm-up" if b == 0 else "end" if last else f"batch {b + 1}"
            points.append(checkpoint(label, tally.items, started, since_ticks, tmp))
        console.print(
            f"batch {b + 1}/{batches}: {tally.items} items, {tally.items / verify_s:.1f} "
            f"verifications/s, {tally.unexpected} unexpected, {tally.missing} missing",
            highlight=False,
        )
        if crashed:
            break
    if stopped_early:
        points.append(checkpoint("end", tally.items, started, since_ticks, tmp))
    wall = time.perf_counter() - started

    base, end = points[1], points[-1]
    growth = {a: getattr(end, a) - getattr(base, a) for a in (*JUDGED, "rss_mib")}
    failures = [crashed] if crashed else []
    failures += [f"{a} grew by {growth[a]:+d}" for a in JUDGED if growth[a] > 0]
    if growth["rss_mib"] > args.rss_growth_mib:
        failures.append(f"RSS grew by {growth['rss_mib']:.1f} MiB (> {args.rss_growth_mib})")
    if tally.results != tally.items or tally.missing:
        failures.append(f"{tally.items} items, {tally.results} results, {tally.missing} missing")
    if tally.statuses["sandbox_error"]:
        failures.append(f"{tally.statuses['sandbox_error']} sandbox_error results")
    if tally.unexpected:
        failures.append(f"{tally.unexpected} results with an unexpected status")

    kinds = Table(title=f"Statuses by kind ({tally.items} items, {tally.duplicates} duplicates)")
    kinds.add_column("kind")
    kinds.add_column("expected")
    kinds.add_column("got")
    for kind in KINDS:
        got = tally.by_kind.get(kind.name, Counter())
        kinds.add_row(
            kind.name,
            "|".join(sorted(kind.expect)),
            ", ".join(f"{s} {c}" for s, c in got.most_common()),
            style=None if set(got) <= kind.expect else "red",
        )
    console.print(kinds)
    console.print(checkpoint_table(points, base))
    rate = tally.items / verify_s
    console.print(
        f"{tally.items} verifications ({tally.distinct} distinct, {tally.tests_run} test runs) "
        f"in {verify_s:.1f} s of score_batch: {rate:.1f} verifications/s "
        f"({wall:.1f} s wall with checkpoints); statuses: {dict(tally.statuses.most_common())}",
        highlight=False,
    )
    for example in tally.examples:
        console.print(f"  {example}", style="red", highlight=False, markup=False)

    if args.json:
        report = {
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "cpus": os.cpu_count(),
            "items": tally.items,
            "results": tally.results,
            "missing": tally.missing,
            "distinct": tally.distinct,
            "duplicates": tally.duplicates,
            "tests_run": tally.tests_run,
            "statuses": dict(tally.statuses),
            "by_kind": {k: dict(v) for k, v in tally.by_kind.items()},
            "unexpected": tally.unexpected,
            "examples": tally.examples,
            "verify_s": verify_s,
            "wall_s": wall,
            "verifications_per_s": rate,
            "stopped_early": stopped_early,
            "checkpoints": [asdict(p) for p in points],
            "growth": growth,
            "failures": failures,
            "ok": not failures,
        }
        args.json.write_text(json.dumps(report, indent=2))
    if failures:
        console.print("SOAK FAILED: " + "; ".join(failures), style="bold red", highlight=False)
        return 1
    console.print("soak passed: every result accounted for, nothing leaked", style="bold green")
    return 0


if __name__ == "__main__":
    sys.exit(main())
