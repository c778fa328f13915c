"""The ``verifiers`` command: score, check, doctor, demo, serve, eval, report."""

from __future__ import annotations

import collections
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from verifiers import api, jsonio, registry
from verifiers.errors import SpecError, VerifierError
from verifiers.eval.cli import register as register_eval_commands
from verifiers.program import ToolchainSpec
from verifiers.result_cache import ResultCache
from verifiers.results import Result, Status
from verifiers.rows import is_parquet, read_rows

app = typer.Typer(
    help="Run model-written code safely and turn the verdict into a reward or a score.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console(stderr=True)
out = Console()


def main() -> None:
    """Entry point of the ``verifiers`` script."""
    app()


# --- reading and writing -------------------------------------------------------------------


def _result_row(index: int, row_id: Any, result: Result) -> dict[str, Any]:
    return {"index": index, "id": row_id, **result.model_dump(mode="json")}


def write_results(path: Path, records: Iterator[dict[str, Any]]) -> None:
    """Write result records as JSONL, or as parquet (flat columns plus the full result as JSON)."""
    if not is_parquet(path):
        with open(path, "w", encoding="utf-8") as f:
            for record in records:
                f.write(jsonio.dumps(record, ensure_ascii=False) + "\n")
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    flat = [
        {
            "index": r["index"],
            "id": None if r["id"] is None else str(r["id"]),
            "status": r["status"],
            "score": r["score"],
            "pass_rate": r["pass_rate"],
            "passed": r["passed"],
            "total": r["total"],
            "format_ok": r["format_ok"],
            "infra_error": r["infra_error"],
            "duration_s": r["duration_s"],
            "feedback": r["feedback"],
            "result_json": jsonio.dumps(r, ensure_ascii=False),
        }
        for r in records
    ]
    pq.write_table(pa.Table.from_pylist(flat), path)


# --- summary -------------------------------------------------------------------------------


def summary_table(results: list[Result], problems: list[Any] | None = None) -> Table:
    """Counts per status, mean score and pass@1 (per problem when problem ids are known)."""
    table = Table(title="Summary", show_lines=False)
    table.add_column("status")
    table.add_column("count", justify="right")
    table.add_column("share", justify="right")
    counts = collections.Counter(r.status for r in results)
    n = len(results) or 1
    for status in Status:
        if counts.get(status):
            table.add_row(status.value, str(counts[status]), f"{counts[status] / n:.1%}")
    mean = sum(r.score for r in results) / n
    if problems is not None and any(p is not None for p in problems):
        by_problem: dict[Any, list[bool]] = collections.defaultdict(list)
        for problem, result in zip(problems, results, strict=True):
            by_problem[problem].append(result.ok)
        pass1 = sum(sum(v) / len(v) for v in by_problem.values()) / len(by_problem)
    else:
        pass1 = counts.get(Status.PASSED, 0) / n
    table.add_section()
    table.add_row("total", str(len(results)), "")
    table.add_row("mean score", f"{mean:.4f}", "")
    table.add_row("pass@1", f"{pass1:.4f}", "")
    return table


def _fail(message: str, code: int = 2) -> None:
    console.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


# --- commands ------------------------------------------------------------------------------


@app.command()
def score(
    input: Annotated[Path, typer.Argument(help="JSONL (.jsonl, .jsonl.gz) or parquet file.")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Results file (.jsonl or .parquet).")
    ] = None,
    language: Annotated[
        str | None, typer.Option(help="Language for rows without a language field.")
    ] = None,
    language_field: Annotated[str, typer.Option(help="Field holding the language.")] = "language",
    completion_field: Annotated[
        str, typer.Option(help="Field holding the completion.")
    ] = "completion",
    tests_field: Annotated[str, typer.Option(help="Field holding the tests.")] = "tests",
    id_field: Annotated[str, typer.Option(help="Field copied to each result as its id.")] = "id",
    problem_field: Annotated[
        str | None, typer.Option(help="Field grouping samples of one problem (for pass@1).")
    ] = None,
    policy: Annotated[str | None, typer.Option(help="Scoring policy: binary or partial.")] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds per test.")] = None,
    memory: Annotated[int | None, typer.Option(help="Memory limit in MB.")] = None,
    max_tests: Annotated[int | None, typer.Option(help="Run at most this many tests.")] = None,
    max_concurrency: Annotated[int | None, typer.Option(help="Programs at once.")] = None,
    runtime: Annotated[str, typer.Option(help="Runtime name.")] = "local",
    cache: Annotated[
        Path | None,
        typer.Option(help="SQLite result cache: a re-run skips rows already verified."),
    ] = None,
) -> None:
    """Score every row of a dataset file and write one result per row, in order."""
    try:
        rows = read_rows(input)
    except (OSError, SpecError) as err:
        _fail(str(err))
    if not rows:
        _fail(f"{input} holds no rows")
    items = []
    for number, row in enumerate(rows):
        lang = row.get(language_field) or language
        if lang is None:
            _fail(f"row {number}: no {language_field!r} field; pass --language")
        items.append(
            {
                "language": lang,
                "completion": row.get(completion_field),
                "tests": row.get(tests_field),
            }
        )
    limits: dict[str, Any] = {}
    if timeout is not None:
        limits["timeout_s"] = timeout
    if memory is not None:
        limits["memory_mb"] = memory
    try:
        result_cache = ResultCache(path=cache) if cache is not None else None
    except ValueError as err:
        _fail(f"--cache: {err}")
    started = time.perf_counter()
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("verifying", total=len(items))
        try:
            results = api.score_batch(
                items,
                policy=policy,
                limits=limits or None,
                runtime=runtime,
                max_tests=max_tests,
                max_concurrency=max_concurrency,
                progress=lambda done, total: progress.update(task, completed=done),
                cache=result_cache,
            )
        except SpecError as err:
            _fail(str(err).replace("items[", "row ["))
        except VerifierError as err:
            _fail(str(err), 3)
    elapsed = time.perf_counter() - started
    if output is not None:
        write_results(
            output,
            (
                _result_row(i, row.get(id_field), r)
                for i, (row, r) in enumerate(zip(rows, results, strict=True))
            ),
        )
        console.print(f"wrote {len(results)} results to {output}")
    problems = [row.get(problem_field) for row in rows] if problem_field else None
    out.print(summary_table(results, problems))
    console.print(f"{len(results)} rows in {elapsed:.1f}s ({len(results) / elapsed:.1f} rows/s)")
    if result_cache is not None:
        reused = sum(r.cached for r in results)
        console.print(f"result cache {cache}: {reused} rows reused", soft_wrap=True)


@app.command()
def check(
    program: Annotated[
        str, typer.Argument(help="File with the completion or code ('-' for stdin).")
    ],
    tests: Annotated[str, typer.Option(help="Tests: a JSON file path or a JSON string.")],
    language: Annotated[str, typer.Option(help="Language name.")] = "python",
    policy: Annotated[str | None, typer.Option(help="Scoring policy.")] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds per test.")] = None,
    memory: Annotated[int | None, typer.Option(help="Memory limit in MB.")] = None,
    runtime: Annotated[str, typer.Option(help="Runtime name.")] = "local",
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
) -> None:
    """Verify one program and show every test; exit status 0 only when all tests pass."""
    completion = sys.stdin.read() if program == "-" else Path(program).read_text()
    tests_path = Path(tests)
    raw_tests = tests_path.read_text() if tests_path.is_file() else tests
    limits: dict[str, Any] = {}
    if timeout is not None:
        limits["timeout_s"] = timeout
    if memory is not None:
        limits["memory_mb"] = memory
    try:
        result = api.score(
            language, completion, raw_tests, policy=policy, limits=limits or None, runtime=runtime
        )
    except SpecError as err:
        _fail(str(err))
    except VerifierError as err:
        _fail(str(err), 3)
    if as_json:
        out.print_json(result.model_dump_json())
    else:
        table = Table(title=f"{language}: {result.summary()}")
        for column in ("test", "status", "wall s", "message"):
            table.add_column(column)
        for t in result.tests:
            message = (t.message or t.stderr).strip().splitlines()
            table.add_row(
                str(t.index),
                t.status.value,
                f"{t.wall_s:.3f}",
                message[-1][:100] if message else "",
            )
        out.print(table)
        if not result.ok:
            out.print(result.feedback)
    raise typer.Exit(0 if result.ok else 1)


@app.command()
def doctor(
    paths: Annotated[
        bool,
        typer.Option("--paths", help="List the host paths a local sandbox can read, per language."),
    ] = False,
) -> None:
    """Show which runtimes and toolchains work here, and why not."""
    if paths:
        _readable_paths()
        return
    table = Table(title="verifiers doctor")
    table.add_column("component")
    table.add_column("status")
    table.add_column("detail")
    table.add_row("python (host)", "ok", f"{platform.python_version()} at {sys.executable}")
    healthy = True
    for name in registry.runtime_names():
        try:
            verdict = registry.get_runtime(name).check()
            table.add_row(
                f"runtime {name}", "ok" if verdict.available else "unavailable", verdict.detail
            )
            healthy &= verdict.available or name != "local"
        except Exception as err:
            table.add_row(f"runtime {name}", "error", f"{type(err).__name__}: {err}")
            healthy &= name != "local"
    _image_rows(table)
    for name in registry.language_names():
        try:
            lang = registry.get_language(name)
            toolchain = getattr(lang, "toolchain", None)
            detail = toolchain() if callable(toolchain) else "available"
            table.add_row(f"language {name}", "ok", str(detail))
        except Exception as err:
            table.add_row(f"language {name}", "unavailable", f"{type(err).__name__}: {err}")
            healthy = False
    out.print(table)
    raise typer.Exit(0 if healthy else 1)


def _readable_paths() -> None:
    """Print what a local sandbox reads of the host: shared, then per language's toolchains."""
    from verifiers.runtimes import LocalRuntime

    runtime = LocalRuntime()
    shared = runtime.readable_paths()
    for group, found in shared.items():
        if found:
            out.print(f"[bold]{group}[/bold] (every sandbox)")
            for path in found:
                out.print(f"  {path}", soft_wrap=True)
    for name in registry.language_names():
        specs: tuple[ToolchainSpec, ...] = tuple(
            getattr(registry.get_language(name), "toolchains", ())
        )
        try:
            tools = runtime.readable_paths(specs)["toolchains"]
        except VerifierError as err:
            out.print(f"[bold]{name}[/bold]: unavailable ({err})")
            continue
        out.print(f"[bold]{name}[/bold]: " + (", ".join(tools) if tools else "nothing more"))


data_app = typer.Typer(help="Dataset preparation for training and evaluation.")
app.add_typer(data_app, name="data")
integrations_app = typer.Typer(help="Paths and helpers for training frameworks.")
app.add_typer(integrations_app, name="integrations")


@integrations_app.command("verl-path")
def verl_path() -> None:
    """Print the path veRL's custom_reward_function.path should point at."""
    from verifiers.integrations import verl as verl_module

    out.print(verl_module.__file__, soft_wrap=True)


@data_app.command("prepare")
def data_prepare(
    source: Annotated[
        str,
        typer.Argument(
            help="eurus, humaneval, mbpp, humaneval-x-js, "
            "humaneval-x-go, humaneval-x-rust, humaneval-x-cpp, humaneval-x-java, spider, "
            "structured-regex."
        ),
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="Parquet file to write.")],
    path: Annotated[Path | None, typer.Option(help="Eurus-2-RL-Data file (parquet/jsonl).")] = None,
    datasets: Annotated[
        Path | None,
        typer.Option(
            help="Shared datasets directory (default: $VERIFIERS_SHARED_DATASETS, "
            "else ../shared/datasets, else the bundled sample)."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Keep a seeded sample of this many.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    token_budget: Annotated[
        int, typer.Option(help="Drop prompts longer than this (0: keep all).")
    ] = 512,
    tokenizer: Annotated[
        str | None, typer.Option(help="Local tokenizer directory to count tokens with.")
    ] = None,
    eval_file: Annotated[
        list[Path] | None,
        typer.Option("--eval", help="Evaluation parquet to check for overlap (repeatable)."),
    ] = None,
) -> None:
    """Convert a dataset into veRL parquet (prompt, ability, reward_model, extra_info)."""
    from verifiers.integrations import data

    tok = None
    if tokenizer:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tokenizer, local_files_only=True)
    try:
        if datasets is None and source in data.SOURCE_SETS:
            console.print(f"reading {data.source_dataset(source)}")
        rows = data.load_source(source, datasets, path)
    except (SpecError, OSError) as err:
        _fail(str(err))
    kept, too_long = data.select(
        rows, token_budget=token_budget or None, tokenizer=tok, limit=limit, seed=seed
    )
    data.write_parquet(kept, output)
    out.print(
        f"{source}: {len(kept)} rows written to {output} ({too_long} over the "
        f"{token_budget}-token budget dropped, {len(rows)} read)"
    )
    for evaluation in eval_file or []:
        import pyarrow.parquet as pq

        overlaps = data.decontaminate(kept, pq.read_table(evaluation).to_pylist())
        out.print(f"overlap with {evaluation}: {len(overlaps)} training rows share 13-grams")
        for o in overlaps[:10]:
            out.print(
                f"  train {o.train_index} ~ eval {o.eval_index}: {o.shared} 13-grams "
                f"({o.share:.0%} of the evaluation problem)"
            )


@data_app.command("decontaminate")
def data_decontaminate(
    train: Annotated[Path, typer.Argument(help="Training parquet.")],
    evaluation: Annotated[list[Path], typer.Argument(help="Evaluation parquet files.")],
    n: Annotated[int, typer.Option(help="n-gram length in words.")] = 13,
    threshold: Annotated[
        float, typer.Option(help="Share of an evaluation problem's n-grams.")
    ] = 0.1,
) -> None:
    """Report training problems that overlap evaluation problems; exit 1 when any does."""
    import pyarrow.parquet as pq

    from verifiers.integrations import data

    train_rows = pq.read_table(train).to_pylist()
    total = 0
    for path in evaluation:
        overlaps = data.decontaminate(train_rows, pq.read_table(path).to_pylist(), n, threshold)
        total += len(overlaps)
        out.print(f"{path}: {len(overlaps)} overlapping pairs")
        for o in overlaps[:20]:
            out.print(
                f"  train {o.train_index} ~ eval {o.eval_index}: {o.shared} shared "
                f"{n}-grams ({o.share:.0%})"
            )
    raise typer.Exit(1 if total else 0)


toolchains_app = typer.Typer(help="Toolchain artefacts built once, used offline.")
app.add_typer(toolchains_app, name="toolchains")


@toolchains_app.command("build")
def toolchains_build(
    only: Annotated[
        list[str] | None,
        typer.Option(help="Only these toolchains (repeatable), e.g. --only rust."),
    ] = None,
) -> None:
    """Build what the languages' toolchains need once (Rust crates, a warm Go build cache).

    Needs the network (crates.io); verification never does. Extra Rust crates:
    VERIFIERS_RUST_CRATES="itertools=0.13,...".
    """
    specs: dict[str, ToolchainSpec] = {}
    for name in registry.language_names():
        for tool in getattr(registry.get_language(name), "toolchains", ()):
            specs.setdefault(tool.name, tool)
    unknown = set(only or ()) - set(specs)
    if unknown:
        _fail(f"--only: unknown toolchain(s) {sorted(unknown)}; known: {sorted(specs)}")
    failed = False
    for name, tool in sorted(specs.items()):
        if tool.setup is None or (only and name not in only):
            continue
        try:
            with console.status(f"setting up the {name} toolchain..."):
                out.print(tool.setup())
        except (OSError, RuntimeError, ValueError, subprocess.SubprocessError) as err:
            console.print(f"[red]{name} failed:[/] {err}")
            failed = True
    raise typer.Exit(1 if failed else 0)


images_app = typer.Typer(help="The language runtime images of the Docker runtime.")
app.add_typer(images_app, name="images")


@images_app.command("build")
def images_build(
    offline: Annotated[
        bool,
        typer.Option(help="Bootstrap the Debian base with debootstrap (no registry needed)."),
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            help="Build only this image and its parents (python, javascript, go, "
            "rust, all; repeatable)."
        ),
    ] = None,
) -> None:
    """Build the images from docker/ (an image whose inputs did not change is kept)."""
    from verifiers import images

    try:
        report = images.build(only, offline=offline, log=console.print)
    except (VerifierError, RuntimeError, ValueError, OSError) as err:
        _fail(str(err), 1)
    built = ", ".join(f"{name} {s:.0f}s" for name, s in report.seconds.items()) or "nothing"
    kept = ", ".join(report.cached) or "nothing"
    out.print(f"built: {built}; up to date: {kept}; total {report.total_s:.1f}s")


@images_app.command("list")
def images_list() -> None:
    """Which images exist, whether they match the definitions, and their versions."""
    table = Table(title="verifiers images")
    table.add_column("component")
    table.add_column("status")
    table.add_column("detail")
    ok = _image_rows(table)
    out.print(table)
    raise typer.Exit(0 if ok else 1)


def _image_rows(table: Table) -> bool:
    """Rows for the Docker runtime's images; whether all of them are present and current."""
    from verifiers import images

    try:
        found = images.list_images()
    except Exception as err:
        table.add_row("docker images", "unavailable", f"{err}")
        return False
    for info in found:
        if not info.present:
            status, detail = "missing", f"build: {images.BUILD_HINT}"
        else:
            status = "ok" if info.current else "outdated"
            pins = ", ".join(f"{k} {v}" for k, v in (info.versions or {}).items())
            detail = f"{info.image_id}, {info.size_mb:.0f} MB; {pins}"
            if not info.current:
                detail += f"; rebuild: {images.BUILD_HINT}"
        table.add_row(f"image {info.tag}", status, detail)
    return all(i.present and i.current for i in found)


@app.command()
def serve(
    host: Annotated[
        str, typer.Option(help="Address to listen on; other than loopback needs a token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8080,
    workers: Annotated[int, typer.Option(help="Server processes (each has its own queue).")] = 1,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="VERIFIERS_SERVICE_TOKEN",
            help="Bearer token required on every request but GET /health.",
            show_envvar=True,
        ),
    ] = None,
    insecure_no_auth: Annotated[
        bool,
        typer.Option("--insecure-no-auth", help="Serve a non-loopback address without a token."),
    ] = False,
    concurrency: Annotated[
        int | None, typer.Option(help="Verifications at once per worker (default: cores).")
    ] = None,
    max_queue: Annotated[
        int, typer.Option(help="Verifications admitted per worker; beyond: 503.")
    ] = 256,
    max_body_mb: Annotated[float, typer.Option(help="Largest request body; beyond: 413.")] = 32,
    request_timeout: Annotated[
        float, typer.Option(help="Seconds before a request is answered 504.")
    ] = 300,
    max_timeout: Annotated[
        float, typer.Option(help="Largest per-test timeout_s a request may ask for.")
    ] = 60,
    max_memory_mb: Annotated[
        int, typer.Option(help="Largest memory_mb a request may ask for.")
    ] = 4096,
    max_queue_mb: Annotated[
        float, typer.Option(help="Memory admitted requests may cost per worker; beyond: 503.")
    ] = 1024,
    sql_root: Annotated[
        list[str] | None,
        typer.Option(help="Directory whose SQLite/DuckDB files requests may name (repeatable)."),
    ] = None,
    postgres_socket: Annotated[
        list[str] | None,
        typer.Option(help="PostgreSQL socket directory requests may connect to (repeatable)."),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve verification over HTTP: /score, /score_batch, SandboxFusion's /run_code."""
    from verifiers.service.config import ServiceConfig
    from verifiers.service.server import serve as run_server

    fields: dict[str, Any] = {
        "host": host,
        "port": port,
        "workers": workers,
        "token": token or None,
        "insecure_no_auth": insecure_no_auth,
        "max_queue": max_queue,
        "max_body_bytes": int(max_body_mb * 1024 * 1024),
        "request_timeout_s": request_timeout,
        "max_queue_mb": max_queue_mb,
        "sql_roots": tuple(sql_root or ()),
        "postgres_sockets": tuple(postgres_socket or ()),
        "log_level": log_level,
    }
    if concurrency is not None:
        fields["concurrency"] = concurrency
    try:
        config = ServiceConfig(**fields)
        caps = dict(config.max_limits)
        caps.update(timeout_s=max_timeout, cpu_time_s=max_timeout, memory_mb=max_memory_mb)
        config = config.model_copy(update={"max_limits": caps})
        run_server(config)
    except SpecError as err:
        _fail(str(err))
    except VerifierError as err:
        _fail(str(err), 3)
    except ValueError as err:  # pydantic's ValidationError: an option out of range
        _fail(str(err))


@app.command()
def demo(
    problems: Annotated[int, typer.Option(help="HumanEval problems to use (at most 24).")] = 12,
    timeout: Annotated[float, typer.Option(help="Seconds per test.")] = 2.0,
) -> None:
    """Score HumanEval canonical solutions and broken variants; check every verdict."""
    from verifiers.demo import demo_items

    items = demo_items(problems)
    started = time.perf_counter()
    with console.status(f"verifying {len(items)} programs in the sandbox..."):
        results = api.score_batch(
            [{"language": "python", "completion": i.completion, "tests": i.tests} for i in items],
            limits={"timeout_s": timeout, "memory_mb": 512},
        )
    elapsed = time.perf_counter() - started
    table = Table(title="HumanEval: canonical solutions and broken variants")
    for column in ("task", "variant", "expected", "got", "", "ms"):
        table.add_column(column)
    wrong = 0
    for item, result in zip(items, results, strict=True):
        ok = result.status is item.expected
        wrong += not ok
        table.add_row(
            item.task_id,
            item.variant,
            item.expected.value,
            result.status.value,
            "[green]✓[/]" if ok else "[red]✗[/]",
            f"{result.duration_s * 1000:.0f}",
        )
    out.print(table)
    out.print(summary_table(results))
    verdict = "all verdicts as expected" if not wrong else f"{wrong} unexpected verdict(s)"
    out.print(f"{len(items)} programs in {elapsed:.1f}s: {verdict}")
    raise typer.Exit(0 if not wrong else 1)


# eval and report (verifiers/eval/cli.py); their heavy imports happen when they run.
register_eval_commands(app)

if __name__ == "__main__":
    main()
