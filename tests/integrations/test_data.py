"""Dataset preparation: veRL parquet from every source, read back by veRL, rewards round-trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import verifiers.integrations.verl as reward
from verifiers.integrations import data
from verifiers.runtimes import LocalRuntime
from verifiers.testing.datasets import dataset

from .conftest import require

SHARED_SOURCES = [
    "humaneval",
    "mbpp",
    "humaneval-x-js",
    "humaneval-x-go",
    "humaneval-x-rust",
    "humaneval-x-cpp",
    "humaneval-x-java",
    "spider",
    "structured-regex",
]


@pytest.mark.parametrize("source", SHARED_SOURCES)
def test_every_shared_source_prepares(tmp_path: Path, source: str) -> None:
    rows = data.load_source(source)
    kept, too_long = data.select(rows, token_budget=4096, limit=5, seed=1)
    out = tmp_path / f"{source}.parquet"
    data.write_parquet(kept, out)
    back = pq.read_table(out).to_pylist()
    assert len(back) == 5 and too_long >= 0
    for row in back:
        assert set(row) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["reward_model"]["style"] == "rule"
        json.loads(row["reward_model"]["ground_truth"])
    again, _ = data.select(rows, token_budget=4096, limit=5, seed=1)
    assert [r["extra_info"]["index"] for r in again] == [r["extra_info"]["index"] for r in kept]


def test_prepared_ground_truths_accept_the_references(runtime: LocalRuntime) -> None:
    checks = []
    for r in dataset("humaneval").rows()[:3]:
        checks.append(("humaneval", r["prompt"] + r["canonical_solution"]))
    for r in dataset("mbpp_sanitized").rows()[:3]:
        checks.append(("mbpp", r["code"]))
    for r in dataset("spider_dev").rows()[:3]:
        checks.append(("spider", r["query"]))
    prepared = {s: data.load_source(s) for s in ("humaneval", "mbpp", "spider")}
    counters = {"humaneval": 0, "mbpp": 0, "spider": 0}
    sources, answers, truths, infos = [], [], [], []
    for source, answer in checks:
        row = prepared[source][counters[source]]
        counters[source] += 1
        sources.append(row["data_source"])
        answers.append(answer)
        truths.append(row["reward_model"]["ground_truth"])
        infos.append(row["extra_info"])
    scores = [r["score"] for r in reward.compute_score_batch(sources, answers, truths, infos)]
    assert scores == [1.0] * len(checks)


def _eurus_fixture(path: Path) -> None:
    reasoning = (
        "\nWhen tackling complex reasoning tasks, you have access to the following "
        "actions. Use them as needed to progress through your thought process.\n\n"
        "[ASSESS]\n\n[ADVANCE]\n\n[VERIFY]\n"
    )
    rows = [
        {
            "data_source": "codecontests",
            "ability": "code",
            "prompt": [
                {"role": "system", "content": reasoning},
                {
                    "role": "user",
                    "content": "Write Python code to solve the task.\nRead two "
                    "integers a and b and print their sum.",
                },
            ],
            "reward_model": {
                "style": "rule",
                "ground_truth": json.dumps(
                    {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}
                ),
            },
            "extra_info": {"split": "train", "index": 0},
        },
        {
            "data_source": "numina_olympiads",
            "ability": "math",
            "prompt": [
                {"role": "system", "content": reasoning},
                {"role": "user", "content": "Compute 1 + 1."},
            ],
            "reward_model": {"style": "rule", "ground_truth": "2"},
            "extra_info": {"split": "train", "index": 1},
        },
        {
            "data_source": "taco",
            "ability": "code",
            "prompt": [
                {"role": "system", "content": reasoning},
                {
                    "role": "user",
                    "content": "Write Python code to solve the task.\n" + "Long statement. " * 400,
                },
            ],
            "reward_model": {
                "style": "rule",
                "ground_truth": json.dumps({"inputs": ["1\n"], "outputs": ["1\n"]}),
            },
            "extra_info": {"split": "train", "index": 2},
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_eurus_code_subset(tmp_path: Path, runtime: LocalRuntime) -> None:
    source = tmp_path / "eurus.jsonl"
    _eurus_fixture(source)
    rows = data.load_source("eurus", path=source)
    assert [r["data_source"] for r in rows] == ["codecontests", "taco"]  # math dropped
    kept, too_long = data.select(rows, token_budget=512)
    assert too_long == 1 and len(kept) == 1
    row = kept[0]
    assert "ASSESS" not in json.dumps(row["prompt"])
    assert row["prompt"][1]["content"].startswith("Read two integers")
    assert "standard input" in row["prompt"][1]["content"]
    out = reward.compute_score(
        row["data_source"],
        "```python\nprint(sum(map(int, input().split())))\n```",
        row["reward_model"]["ground_truth"],
        row["extra_info"],
    )
    assert out["score"] == 1.0


def test_token_budget_with_a_tokenizer(tmp_path: Path, tokenizer: Any) -> None:
    source = tmp_path / "eurus.jsonl"
    _eurus_fixture(source)
    rows = data.load_source("eurus", path=source)
    counted = [data.prompt_tokens(r, tokenizer) for r in rows]
    assert counted[0] < counted[1]
    kept, dropped = data.select(rows, token_budget=counted[0], tokenizer=tokenizer)
    assert len(kept) == 1 and dropped == 1


def test_verl_reads_the_prepared_parquet(tmp_path: Path, tokenizer: Any) -> None:
    require("verl", "omegaconf")
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    kept, _ = data.select(data.load_source("mbpp"), token_budget=4096, limit=4)
    path = tmp_path / "mbpp.parquet"
    data.write_parquet(kept, path)
    config = OmegaConf.create(
        {
            "prompt_key": "prompt",
            "max_prompt_length": 4096,
            "cache_dir": str(tmp_path / "cache"),
            "filter_overlong_prompts": False,
        }
    )
    dataset = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config)
    assert len(dataset) == 4
    item = dataset[0]
    assert item["data_source"] == "mbpp"
    assert json.loads(item["reward_model"]["ground_truth"])["test_list"]


def test_decontamination() -> None:
    evaluation = data.load_source("humaneval")[:20]
    train = data.load_source("mbpp")[:30]
    assert data.decontaminate(train, evaluation) == []
    leaked = dict(train[5])
    leaked["prompt"] = [
        train[5]["prompt"][0],
        {"role": "user", "content": evaluation[7]["prompt"][1]["content"]},
    ]
    found = data.decontaminate([*train, leaked], evaluation)
    assert [(o.train_index, o.eval_index) for o in found] == [(len(train), 7)]
    assert found[0].share == 1.0


def test_checker_bearing_sources_prepare_and_score(tmp_path: Path, runtime: LocalRuntime) -> None:
    """Library Checker and Kattis rows carry their checker or interactor to the reward."""
    for source in ("library-checker", "kattis-validators"):
        rows = data.load_source(source)
        out = tmp_path / f"{source}.parquet"
        data.write_parquet(rows, out)
        back = pq.read_table(out).to_pylist()
        assert len(back) == len(rows) > 0
        for row in back:
            truth = json.loads(row["reward_model"]["ground_truth"])
            assert "checker" in truth or "interactor" in truth
            assert row["extra_info"]["language"] == "cpp"
    different = next(
        r for r in dataset("kattis_validators").rows() if r["problem_id"] == "different"
    )
    row = next(
        r
        for r in data.load_source("kattis-validators")
        if r["extra_info"]["task_id"] == "different"
    )
    by_name = {s["name"]: s["source"] for s in different["submissions"]}
    answers = [
        f"```cpp\n{by_name['accepted/different.cc']}\n```",
        f"```cpp\n{by_name['wrong_answer/different_no_abs.cc']}\n```",
    ]
    results = reward.compute_score_batch(
        [row["data_source"]] * 2,
        answers,
        [row["reward_model"]["ground_truth"]] * 2,
        [row["extra_info"]] * 2,
    )
    assert [r["score"] for r in results] == [1.0, 0.0]
