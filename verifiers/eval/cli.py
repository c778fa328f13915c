"""``verifiers eval`` and ``verifiers report`` (registered on the main command)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from verifiers.errors import SpecError, VerifierError

console = Console(stderr=True)
out = Console()


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in text.split(",") if k.strip()})
    except ValueError:
        raise SpecError(
            "k", f"expected comma-separated integers such as 1,5,10, got {text!r}"
        ) from None
    if not ks or ks[0] < 1:
        raise SpecError("k", f"expected positive integers, got {text!r}")
    return ks


def summary_table(summary: list, ks: list[int], title: str) -> Table:  # type: ignore[type-arg]
    """pass@k and the breakdown of a run, as a rich table."""
    from verifiers.eval.runner import CATEGORY_ORDER

    table = Table(title=title)
    for column in ("dataset", "language", "problems", "samples", *[f"pass@{k}" for k in ks]):
        table.add_column(column, justify="left" if column in ("dataset", "language") else "right")
    shown = [c for c in CATEGORY_ORDER if any(g.breakdown.get(c) for g in summary)]
    for category in shown:
        table.add_column(category, justify="right")
    for g in summary:
        table.add_row(
            g.dataset,
            g.language,
            str(g.problems),
            str(g.samples),
            *[f"{100 * g.pass_at_k[k]:.1f}%" if k in g.pass_at_k else "-" for k in ks],
            *[str(g.breakdown.get(c, 0)) for c in shown],
        )
    return table


def register(app: typer.Typer) -> None:
    """Add ``eval`` and ``report`` to the ``verifiers`` command."""

    @app.command("eval")
    def eval_command(
        model: Annotated[str, typer.Option(help="Model path or name (served name for openai).")],
        dataset: Annotated[
            str,
            typer.Option(
                help="humaneval, mbpp, humaneval-x-js, humaneval-x-go, humaneval-x-rust, "
                "humaneval-x-cpp, humaneval-x-java, "
                "spider, structured-regex, or a JSONL/parquet file."
            ),
        ],
        out_path: Annotated[
            Path, typer.Option("--out", help="Where every completion and its result go.")
        ] = Path("eval.jsonl"),
        n: Annotated[int, typer.Option(help="Samples per problem.")] = 10,
        k: Annotated[str, typer.Option(help="The k of pass@k, comma-separated.")] = "1,5,10",
        backend: Annotated[
            str, typer.Option(help="transformers, vllm or openai.")
        ] = "transformers",
        limit: Annotated[int | None, typer.Option(help="Only the first N problems.")] = None,
        temperature: Annotated[float, typer.Option(help="0 is greedy.")] = 0.8,
        top_p: Annotated[float, typer.Option()] = 0.95,
        max_tokens: Annotated[int, typer.Option(help="New tokens per completion.")] = 512,
        stop: Annotated[
            list[str] | None, typer.Option(help="A stop sequence (repeatable).")
        ] = None,
        seed: Annotated[int, typer.Option()] = 0,
        chat_template: Annotated[
            Path | None,
            typer.Option(help="A Jinja chat template file: use the same one for every checkpoint."),
        ] = None,
        base_url: Annotated[
            str | None, typer.Option(help="openai: the server's API root, e.g. http://host:8000/v1")
        ] = None,
        batch_size: Annotated[int, typer.Option(help="Prompts per generation batch.")] = 8,
        device: Annotated[str, typer.Option(help="transformers: cpu, cuda, ...")] = "cpu",
        dtype: Annotated[str | None, typer.Option(help="float32, bfloat16, ...")] = None,
        concurrency: Annotated[
            int | None, typer.Option(help="Verifications at once (default: one per core).")
        ] = None,
        timeout: Annotated[float | None, typer.Option(help="Per-test time limit (s).")] = None,
        datasets: Annotated[
            Path | None,
            typer.Option(
                help="The shared datasets directory (default: $VERIFIERS_SHARED_DATASETS, "
                "else ../shared/datasets, else the bundled sample)."
            ),
        ] = None,
    ) -> None:
        """Generate completions with a model, verify them, print pass@k and the breakdown."""
        from rich.progress import Progress

        from verifiers.eval.backends import Sampling, make_backend
        from verifiers.eval.problems import DATASETS, load_problems
        from verifiers.eval.runner import evaluate
        from verifiers.integrations.data import source_dataset

        try:
            ks = _ks(k)
            if ks[-1] > n:
                raise SpecError("k", f"pass@{ks[-1]} needs at least {ks[-1]} samples (--n {n})")
            if datasets is None and dataset in DATASETS:
                console.print(f"reading {source_dataset(dataset)}")
            problems = load_problems(dataset, datasets, limit)
            template = chat_template.read_text() if chat_template else None
            engine = make_backend(
                backend,
                model,
                chat_template=template,
                base_url=base_url,
                device=device,
                dtype=dtype,
            )
            sampling = Sampling(
                n=n,
                temperature=temperature,
                top_p=top_p,
                max_tokens=max_tokens,
                stop=tuple(stop or ()),
                seed=seed,
            )
            with Progress(console=console, transient=True) as bar:
                task = bar.add_task("generate and verify", total=len(problems) * n)
                run = evaluate(
                    problems,
                    engine,
                    sampling,
                    out_path,
                    ks=ks,
                    batch_size=batch_size,
                    max_concurrency=concurrency,
                    limits={"timeout_s": timeout} if timeout else None,
                    progress=lambda done, total: bar.update(task, completed=done),
                )
        except SpecError as err:
            console.print(f"[red]error:[/red] {err}")
            raise typer.Exit(2) from None
        except VerifierError as err:
            console.print(f"[red]error:[/red] {err}")
            raise typer.Exit(3) from None
        except Exception as err:  # the backend's own failure (model files, server, memory)
            console.print(f"[red]{backend} generation failed:[/red] {type(err).__name__}: {err}")
            raise typer.Exit(3) from None
        out.print(summary_table(run.summary, ks, f"{model} ({backend}, n={n})"))
        out.print(
            f"{run.rows} samples -> {run_path(run.out)}; generation {run.generate_s:.1f}s, "
            f"verification {run.verify_s:.1f}s (overlapped), wall {run.wall_s:.1f}s"
        )

    @app.command("report")
    def report_command(
        files: Annotated[
            list[Path], typer.Argument(help="Eval outputs (JSONL), first = baseline.")
        ],
        html_path: Annotated[Path, typer.Option("--html", help="The report to write.")] = Path(
            "report.html"
        ),
        k: Annotated[str, typer.Option(help="The k of pass@k, comma-separated.")] = "1,5,10",
    ) -> None:
        """Compare eval runs: pass@k side by side, verdict charts, flips, slowest programs."""
        from verifiers.eval.report import write_report
        from verifiers.eval.runner import summarize

        try:
            ks = _ks(k)
            for path in files:
                if not path.is_file():
                    raise SpecError("files", f"{path} does not exist")
            runs = write_report(files, html_path, ks)
        except SpecError as err:
            console.print(f"[red]error:[/red] {err}")
            raise typer.Exit(2) from None
        for run in runs:
            summary = summarize(run.rows, ks)
            shown = sorted({kk for g in summary for kk in g.pass_at_k})
            out.print(summary_table(summary, shown, run.name))
        out.print(f"report: {run_path(html_path)}")


def run_path(path: Path) -> str:
    """A path as the user would type it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
