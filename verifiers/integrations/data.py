"""Dataset preparation: veRL parquet files, and a decontamination check.

Every row follows veRL's RL dataset layout: ``data_source``, ``prompt`` (chat messages),
``ability``, ``reward_model`` (``ground_truth`` as a JSON string the verifiers recognise,
``style = "rule"``) and ``extra_info`` (``split``, ``index``, ``language``, ``task_id``).
Sources: the code subset of Eurus-2-RL-Data (a local file with its schema), and HumanEval,
MBPP, HumanEval-X (JavaScript, Go, Rust), Spider, StructuredRegex, Library Checker (testlib
checkers) and the Kattis problems with output validators or an interactor from a directory laid out
like ``../shared/datasets``, by default from wherever ``verifiers.testing.datasets`` resolves
each set (the full shared copy when present, else the bundled sample).
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifiers import jsonio
from verifiers.errors import SpecError
from verifiers.rows import read_rows
from verifiers.testing.datasets import Dataset, dataset

SYSTEM = (
    "You are an expert programmer. Think about the task, then answer with exactly one "
    "fenced code block containing the complete solution."
)
STDIO_INSTRUCTIONS = (
    "\n\nWrite a complete Python program that reads the input from standard input and writes "
    "the answer to standard output. Put the whole program in one ```python code block."
)
#: Characters per token when no tokenizer is given (a conservative estimate for code and English).
CHARS_PER_TOKEN = 3.5
SOURCES = (
    "eurus",
    "humaneval",
    "mbpp",
    "humaneval-x-js",
    "humaneval-x-go",
    "humaneval-x-rust",
    "humaneval-x-cpp",
    "humaneval-x-java",
    "spider",
    "structured-regex",
    "library-checker",
    "kattis-validators",
)
#: The set (directory of the shared datasets) each source other than ``eurus`` reads.
SOURCE_SETS = {
    "humaneval": "humaneval",
    "mbpp": "mbpp_sanitized",
    "humaneval-x-js": "humaneval_x",
    "humaneval-x-go": "humaneval_x",
    "humaneval-x-rust": "humaneval_x",
    "humaneval-x-cpp": "humaneval_x",
    "humaneval-x-java": "humaneval_x",
    "spider": "spider_dev",
    "structured-regex": "structured_regex",
    "library-checker": "library_checker",
    "kattis-validators": "kattis_validators",
}


def _chat(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _row(
    source: str,
    user: str,
    ability: str,
    ground_truth: Mapping[str, Any],
    index: int,
    language: str,
    task_id: str,
    split: str = "train",
) -> dict[str, Any]:
    return {
        "data_source": source,
        "prompt": _chat(user),
        "ability": ability,
        "reward_model": {"ground_truth": jsonio.dumps(ground_truth), "style": "rule"},
        "extra_info": {"split": split, "index": index, "language": language, "task_id": task_id},
    }


def _one(directory: Path, name: str) -> Path:
    found = sorted((directory / name).glob("*.jsonl.gz"))
    if not found:
        raise SpecError("datasets", f"no {name} data under {directory / name}")
    return found[0]


# --- sources -------------------------------------------------------------------------------


def humaneval(directory: Path) -> list[dict[str, Any]]:
    """HumanEval: complete a function; tests are its ``check``."""
    rows = []
    for n, r in enumerate(read_rows(_one(directory, "humaneval"))):
        user = (
            f"Complete the following Python function.\n\n```python\n{r['prompt']}```\n\n"
            "Answer with the whole function in one ```python code block."
        )
        truth = {"test": r["test"], "entry_point": r["entry_point"], "prompt": r["prompt"]}
        rows.append(_row("humaneval", user, "code", truth, n, "python", r["task_id"]))
    return rows


def mbpp(directory: Path) -> list[dict[str, Any]]:
    """MBPP (sanitized): the task and its first assert; every assert is a test."""
    rows = []
    for n, r in enumerate(read_rows(_one(directory, "mbpp_sanitized"))):
        user = (
            f"{r['prompt']}\nYour code should pass this test:\n{r['test_list'][0]}\n\n"
            "Answer with one ```python code block."
        )
        truth = {"test_list": r["test_list"], "test_imports": r["test_imports"]}
        rows.append(_row("mbpp", user, "code", truth, n, "python", str(r["task_id"])))
    return rows


_X = {
    "js": ("javascript", "JavaScript"),
    "go": ("go", "Go"),
    "rust": ("rust", "Rust"),
    "cpp": ("cpp", "C++"),
    "java": ("java", "Java"),
}


def humaneval_x(directory: Path, short: str) -> list[dict[str, Any]]:
    """HumanEval-X in one language: complete the declaration; tests are the test code."""
    language, label = _X[short]
    path = directory / "humaneval_x" / f"humaneval_x_{short}.jsonl.gz"
    rows = []
    for n, r in enumerate(read_rows(path)):
        head = r["declaration"] if short == "rust" else r["prompt"]
        fence = language
        user = (
            f"Complete the following {label} function.\n\n```{fence}\n{head}```\n\n"
            f"Answer with the whole function (and its imports) in one ```{fence} code block."
        )
        # The declared signature, which Go, Rust, C++ and Java hold the program to.
        truth: dict[str, Any] = {"test": r["test"], "declaration": r["declaration"]}
        if short == "go":
            # Go's declaration is the entry point alone: the task's helpers the tests call
            # (Go/32's `Poly`) are in the prompt, which the policy holds the program to.
            truth["test_setup"] = r["test_setup"]
            truth["prompt"] = r["prompt"]
        rows.append(_row(f"humaneval-x-{short}", user, "code", truth, n, language, r["task_id"]))
    return rows


def _schema(db: Path) -> str:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        statements = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL"
        ).fetchall()
    return "\n".join(s.strip() + ";" for (s,) in statements)


def spider(directory: Path) -> list[dict[str, Any]]:
    """Spider dev on SQLite: the schema and the question; execution match on the database."""
    base = directory / "spider_dev"
    schemas: dict[str, str] = {}
    rows = []
    for n, r in enumerate(read_rows(base / "spider_dev.jsonl.gz")):
        db = (base / "database" / r["db_id"] / f"{r['db_id']}.sqlite").resolve()
        if r["db_id"] not in schemas:
            schemas[r["db_id"]] = _schema(db)
        user = (
            f"SQLite database schema:\n\n```sql\n{schemas[r['db_id']]}\n```\n\n"
            f"Question: {r['question']}\n\nAnswer with one ```sql code block holding a "
            "single SQLite query."
        )
        truth = {
            "database": str(db),
            "expected_rows": r["gold_result"],
            "ordered": r["order_matters"],
        }
        rows.append(_row("spider", user, "sql", truth, n, "sql", r["id"]))
    return rows


def structured_regex(directory: Path) -> list[dict[str, Any]]:
    """StructuredRegex: the description; its example strings are the tests (verified gold only)."""
    rows = []
    for n, r in enumerate(read_rows(_one(directory, "structured_regex"))):
        if not r.get("regex_python_verified"):
            continue
        user = (
            f"{r['description']}\n\nWrite a Python regular expression that matches exactly "
            "the strings described (the whole string must match). Answer with the pattern "
            "alone in one ```regex code block."
        )
        truth = {
            "positive": r["pos_examples"],
            "negative": r["neg_examples"],
            "mode": "fullmatch",
            "gold": r["regex_python"],
        }
        rows.append(_row("structured-regex", user, "regex", truth, n, "regex", r["id"]))
    return rows


CPP_INSTRUCTIONS = (
    "\n\nWrite a complete C++17 program that reads the input from standard input and writes "
    "the answer to standard output. Put the whole program in one ```cpp code block."
)


def library_checker(directory: Path) -> list[dict[str, Any]]:
    """Library Checker: the statement; the tests judged by the problem's testlib checker.

    The ground truth carries the checker's source and headers, so any valid answer scores.
    """
    rows = []
    for n, r in enumerate(read_rows(_one(directory, "library_checker"))):
        # The English part, with the templates' section names as words.
        statement = re.sub(r"@\{lang\.ja\}.*?(?=@\{lang\.|\Z)", "", r["statement_md"], flags=re.S)
        statement = re.sub(r"@\{lang\.\w+\}\n?", "", statement)
        statement = re.sub(r"@\{keyword\.(\w+)\}", lambda m: m.group(1).title(), statement)
        user = f"{r['title']}\n\n{statement.strip()}{CPP_INSTRUCTIONS}"
        truth = {
            "tests": [{"input": t["input"], "output": t["answer"]} for t in r["tests"]],
            "checker": {
                "language": r["checker_language"],
                "source": r["checker_source"],
                "files": r["support_files"],
                "protocol": "testlib",
            },
            "time_limit_s": r["time_limit_s"],
        }
        rows.append(_row("library-checker", user, "code", truth, n, "cpp", r["problem_id"]))
    return rows


def kattis_validators(directory: Path) -> list[dict[str, Any]]:
    """Kattis problems with an output validator or an interactor (the Kattis protocol).

    The packages carry no statement here: the prompt names the problem and shows its sample
    tests (or sample interactions).
    """
    rows = []
    for n, r in enumerate(read_rows(_one(directory, "kattis_validators"))):
        # name: X, or a name per language (name:\n  en: X)
        name = re.search(
            r"^name:[ \t]*(\S.*)$|^name:\s*\n\s+en:[ \t]*(\S.*)$", r["problem_yaml"], re.M
        )
        title = (name.group(1) or name.group(2)).strip() if name else r["problem_id"]
        samples = [t for t in r["tests"] if t["name"].startswith("sample")]
        shown = "".join(
            f"\n\nSample input:\n```\n{t['input']}```\nSample output:\n```\n{t['answer']}```"
            for t in samples
        )
        for interaction in r.get("sample_interactions") or []:
            text = interaction["text"]
            # In the package's files, > is what the program writes and < what it reads.
            shown += f"\n\nSample interaction (> you write, < you read):\n```\n{text}```"
        files = {path.split("/", 1)[1]: text for path, text in r["validator_files"].items()}
        judge = {
            "language": r["validator_language"],
            "files": files,
            "protocol": "kattis",
            "flags": list(r.get("validator_flags") or []),
        }
        key = "interactor" if r["kind"] == "interactive" else "checker"
        truth = {
            "tests": [{"input": t["input"], "output": t["answer"]} for t in r["tests"]],
            key: judge,
        }
        user = f"Kattis problem: {title}.{shown}{CPP_INSTRUCTIONS}"
        rows.append(_row("kattis-validators", user, "code", truth, n, "cpp", r["problem_id"]))
    return rows


_REASONING_PREFIX = re.compile(r"^\s*Write (?:Python )?code to solve the task\.?\s*", re.I)


def eurus(path: Path) -> list[dict[str, Any]]:
    """The code subset of Eurus-2-RL-Data (a parquet or JSON-lines file with its schema).

    The reasoning system template is dropped; the prompt becomes our system message and a
    user message asking for one stdin/stdout program in a code block.
    """
    records = read_rows(path)
    rows = []
    for n, r in enumerate(records):
        if r.get("ability") != "code":
            continue
        messages = r.get("prompt") or []
        users = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
        if not users:
            continue
        problem = _REASONING_PREFIX.sub("", str(users[-1]["content"])).strip()
        truth_text = (r.get("reward_model") or {}).get("ground_truth")
        if not truth_text:
            continue
        truth = jsonio.loads(truth_text) if isinstance(truth_text, str) else truth_text
        info = r.get("extra_info") or {}
        task = f"{r.get('data_source', 'eurus')}/{info.get('index', n)}"
        rows.append(
            _row(
                str(r.get("data_source") or "eurus"),
                problem + STDIO_INSTRUCTIONS,
                "code",
                truth,
                n,
                "python",
                task,
                str(info.get("split", "train")),
            )
        )
    return rows


# --- selection and output ------------------------------------------------------------------


def prompt_tokens(row: Mapping[str, Any], tokenizer: Any = None) -> int:
    """Tokens of a row's prompt, with ``tokenizer`` (its chat template if any), else estimated."""
    messages = row["prompt"]
    if tokenizer is None:
        return int(sum(len(m["content"]) for m in messages) / CHARS_PER_TOKEN) + 1
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        return len(ids["input_ids"] if isinstance(ids, Mapping) else ids)
    return len(tokenizer("\n".join(m["content"] for m in messages))["input_ids"])


def source_dataset(source: str) -> Dataset:
    """Where a source other than ``eurus`` is read by default (the shared copy, else bundled).

    Raises:
        SpecError: ``source`` is not one of :data:`SOURCE_SETS`.
    """
    if source not in SOURCE_SETS:
        known = ", ".join(SOURCE_SETS)
        raise SpecError("source", f"{source!r} is not read from the datasets; known: {known}")
    return dataset(SOURCE_SETS[source])


def load_source(
    source: str, datasets: Path | None = None, path: Path | None = None
) -> list[dict[str, Any]]:
    """Rows of one source.

    Args:
        source: One of :data:`SOURCES`.
        datasets: For the sources other than ``eurus``, a directory laid out like
            ``../shared/datasets``; by default :func:`source_dataset`'s.
        path: For ``eurus``, the Eurus-2-RL-Data file.
    """
    if source == "eurus":
        if path is None:
            raise SpecError("path", "the eurus source needs the path of an Eurus-2-RL-Data file")
        return eurus(path)
    loaders: dict[str, Callable[[Path], list[dict[str, Any]]]] = {
        "humaneval": humaneval,
        "mbpp": mbpp,
        "spider": spider,
        "structured-regex": structured_regex,
        "humaneval-x-js": lambda d: humaneval_x(d, "js"),
        "humaneval-x-go": lambda d: humaneval_x(d, "go"),
        "humaneval-x-rust": lambda d: humaneval_x(d, "rust"),
        "humaneval-x-cpp": lambda d: humaneval_x(d, "cpp"),
        "humaneval-x-java": lambda d: humaneval_x(d, "java"),
        "library-checker": library_checker,
        "kattis-validators": kattis_validators,
    }
    if source not in loaders:
        raise SpecError("source", f"unknown source {source!r}; known: {', '.join(SOURCES)}")
    return loaders[source](datasets or source_dataset(source).root)


def select(
    rows: list[dict[str, Any]],
    *,
    token_budget: int | None = 512,
    tokenizer: Any = None,
    limit: int | None = None,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], int]:
    """Rows within the token budget, then a seeded sample of ``limit``.

    Returns:
        The rows kept, and how many were over the budget.
    """
    kept = [r for r in rows if token_budget is None or prompt_tokens(r, tokenizer) <= token_budget]
    dropped = len(rows) - len(kept)
    if limit is not None and limit < len(kept):
        kept = random.Random(seed).sample(kept, limit)
        kept.sort(key=lambda r: r["extra_info"]["index"])
    return kept, dropped


def write_parquet(rows: Sequence[Mapping[str, Any]], out: Path) -> None:
    """Write rows in veRL's layout."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(list(rows)), out)


# --- decontamination -----------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    """The word n-grams of normalised text (lower case, letters and digits only)."""
    words = _words(text)
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


@dataclass(frozen=True)
class Overlap:
    """A training row that shares n-grams with an evaluation row."""

    train_index: int
    eval_index: int
    shared: int
    share: float  # of the evaluation row's n-grams


def _problem(row: Mapping[str, Any]) -> str:
    return " ".join(m["content"] for m in row["prompt"] if m.get("role") == "user")


def decontaminate(
    train: Sequence[Mapping[str, Any]],
    evaluation: Sequence[Mapping[str, Any]],
    n: int = 13,
    threshold: float = 0.1,
) -> list[Overlap]:
    """Training rows whose problem shares at least ``threshold`` of an evaluation problem's n-grams.

    Uses normalised word 13-grams by default (the convention of large-scale decontamination
    reports); boilerplate our prompts add is the same everywhere and is left out.
    """
    boilerplate = ngrams(SYSTEM + STDIO_INSTRUCTIONS, n)
    index: dict[tuple[str, ...], list[int]] = {}
    eval_grams = []
    for j, row in enumerate(evaluation):
        grams = ngrams(_problem(row), n) - boilerplate
        eval_grams.append(grams)
        for gram in grams:
            index.setdefault(gram, []).append(j)
    found = []
    for i, row in enumerate(train):
        counts: dict[int, int] = {}
        for gram in ngrams(_problem(row), n) - boilerplate:
            for j in index.get(gram, ()):
                counts[j] = counts.get(j, 0) + 1
        for j, shared in counts.items():
            share = shared / max(1, len(eval_grams[j]))
            if share >= threshold:
                found.append(Overlap(i, j, shared, round(share, 4)))
    return sorted(found, key=lambda o: -o.share)
