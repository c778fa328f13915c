"""veRL: our file loaded by veRL's own loader, run by its reward managers on a real DataProto."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import verifiers.integrations.verl as ours
from verifiers.runtimes import LocalRuntime

from .conftest import require

STDIO = json.dumps({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]})
GOOD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
WRONG = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
CRASH = "```python\nraise SystemExit(3)\n```"
HUMANEVAL = {"test": "def check(candidate):\n    assert candidate(2) == 4\n", "entry_point": "f"}


@pytest.fixture(scope="module")
def verl() -> Any:
    require("verl", "torch", "omegaconf")
    import verl

    return verl


def config(name: str, **reward_kwargs: Any) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.create(
        {
            "reward": {
                "custom_reward_function": {
                    "path": ours.__file__,
                    "name": name,
                    "reward_kwargs": reward_kwargs,
                }
            }
        }
    )


def data_proto(tokenizer: Any, rows: list[dict[str, Any]]) -> Any:
    import numpy as np
    import torch
    from verl import DataProto

    prompt_len, response_len = 8, 64
    prompts, responses, masks = [], [], []
    for row in rows:
        prompt = tokenizer("solve", add_special_tokens=False)["input_ids"][:prompt_len]
        answer = tokenizer(row["completion"], add_special_tokens=False)["input_ids"]
        assert len(answer) <= response_len, "the test completion is too long"
        assert tokenizer.decode(answer) == row["completion"]
        pad = tokenizer.pad_token_id
        prompts.append([pad] * (prompt_len - len(prompt)) + prompt)
        responses.append(answer + [pad] * (response_len - len(answer)))
        masks.append(
            [0] * (prompt_len - len(prompt))
            + [1] * len(prompt)
            + [1] * len(answer)
            + [0] * (response_len - len(answer))
        )
    tensors = {
        "prompts": torch.tensor(prompts),
        "responses": torch.tensor(responses),
        "attention_mask": torch.tensor(masks),
        "input_ids": torch.cat([torch.tensor(prompts), torch.tensor(responses)], dim=1),
    }
    non_tensors = {
        "data_source": np.array([r["data_source"] for r in rows], dtype=object),
        "reward_model": np.array(
            [{"ground_truth": r["ground_truth"], "style": "rule"} for r in rows], dtype=object
        ),
        "extra_info": np.array([dict(r.get("extra_info", {})) for r in rows], dtype=object),
    }
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)


ROWS = [
    {"data_source": "codecontests", "completion": GOOD, "ground_truth": STDIO},
    {"data_source": "codecontests", "completion": WRONG, "ground_truth": STDIO},
    {"data_source": "codecontests", "completion": CRASH, "ground_truth": STDIO},
    {
        "data_source": "humaneval",
        "completion": "def f(x):\n    return 2 * x\n",
        "ground_truth": json.dumps(HUMANEVAL),
        "extra_info": {"policy": "partial"},
    },
]
EXPECTED = [1.0, 0.0, 0.0, 1.0]


def test_loaded_by_verls_own_loader(verl: Any, runtime: LocalRuntime) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn

    fn = get_custom_reward_fn(config("compute_score", timeout_s=2))
    out = fn(data_source="codecontests", solution_str=GOOD, ground_truth=STDIO, extra_info={})
    assert out["score"] == 1.0 and out["pass_rate"] == 1.0 and out["format"] == 1.0
    assert out["status_passed"] == 1.0 and out["infra_error"] == 0.0
    assert all(isinstance(v, float) for v in out.values())


def test_naive_reward_manager(verl: Any, tokenizer: Any, runtime: LocalRuntime) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager.naive import NaiveRewardManager

    manager = NaiveRewardManager(
        tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config("compute_score"))
    )
    out = manager(data_proto(tokenizer, ROWS), return_dict=True)
    rewards = out["reward_tensor"].sum(dim=1).tolist()
    assert rewards == EXPECTED
    extra = out["reward_extra_info"]
    assert extra["status_failed"] == [0.0, 1.0, 0.0, 0.0]
    assert extra["status_runtime_error"] == [0.0, 0.0, 1.0, 0.0]


def test_batch_reward_manager(verl: Any, tokenizer: Any, runtime: LocalRuntime) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager.batch import BatchRewardManager

    fn = get_custom_reward_fn(config("compute_score_batch", timeout_s=2))
    manager = BatchRewardManager(tokenizer, num_examine=0, compute_score=fn)
    data = data_proto(tokenizer, ROWS)
    out = manager(data, return_dict=True)
    tensor = out["reward_tensor"]
    assert tensor.sum(dim=1).tolist() == EXPECTED
    # The reward sits on the last valid response token.
    last = int(data.batch["attention_mask"][0, 8:].sum()) - 1
    assert tensor[0, last] == 1.0 and tensor[0].count_nonzero() == 1
    assert out["reward_extra_info"]["pass_rate"] == [1.0, 0.0, 0.0, 1.0]


def test_async_reward_loop(verl: Any, tokenizer: Any, runtime: LocalRuntime) -> None:
    from verl.experimental.reward_loop.reward_manager.naive import (
        NaiveRewardManager as LoopManager,
    )
    from verl.trainer.ppo.reward import get_custom_reward_fn

    fn = get_custom_reward_fn(config("compute_score_async"))
    data = data_proto(tokenizer, ROWS)

    async def main() -> list[Any]:
        manager = LoopManager(
            config=config("compute_score_async"), tokenizer=tokenizer, compute_score=fn
        )
        assert manager.is_async_reward_score
        return await asyncio.gather(
            *(manager.run_single(data[i : i + 1]) for i in range(len(ROWS)))
        )

    results = asyncio.run(main())
    assert [r["reward_score"] for r in results] == EXPECTED
    assert results[2]["reward_extra_info"]["status_runtime_error"] == 1.0


def test_ground_truth_formats_and_inference(runtime: LocalRuntime) -> None:
    apps_call = json.dumps({"fn_name": "double", "inputs": [[2], [3]], "outputs": [[4], [6]]})
    taco_like = json.dumps({"inputs": ["3\n"], "outputs": ["9\n"]})
    rows = ours.compute_score_batch(
        ["apps", "taco", "humaneval_x_go", "spider"],
        [
            "def double(x):\n    return 2 * x",
            "n = int(input())\nprint(n * n)",
            "package main",
            "SELECT 1",
        ],
        [
            apps_call,
            taco_like,
            json.dumps({"inputs": ["x"], "outputs": ["y"]}),
            json.dumps({"database": {"schema": "CREATE TABLE t(a)"}, "expected_rows": [[1]]}),
        ],
        [{}, {}, {}, {}],
    )
    assert [r["score"] for r in rows[:2]] == [1.0, 1.0]
    assert ours.infer_language("humaneval_x_go", {}) == "go"
    assert ours.infer_language("x", {"database": "a.db"}) == "sql"
    assert rows[3]["score"] == 1.0


def test_a_bad_row_never_stops_the_batch(runtime: LocalRuntime) -> None:
    rows = ours.compute_score_batch(
        ["apps", "apps"],
        ["print(1)", "print(1)"],
        ['{"inputs": ["1"]}', '{"inputs": [""], "outputs": ["1"]}'],
        None,
    )
    # Bad data is spec_error, never infra_error: dashboards must not show it as an outage.
    assert rows[0]["spec_error"] == 1.0 and rows[0]["infra_error"] == 0.0
    assert rows[1]["score"] == 1.0 and rows[1]["spec_error"] == 0.0


def test_metrics_keep_bad_data_and_our_faults_apart(runtime: LocalRuntime) -> None:
    broken = LocalRuntime()
    assert broken.check().available
    broken.start_timeout_s = 0.0001  # no sandbox starts in time: our machinery's fault
    truths = ['{"inputs": ["1 2\n"]}', STDIO, STDIO]
    rows = ours.compute_score_batch(["apps"] * 3, [GOOD, GOOD, GOOD], truths, None, runtime=broken)
    assert [(r["spec_error"], r["infra_error"]) for r in rows] == [
        (1.0, 0.0),
        (0.0, 1.0),
        (0.0, 1.0),
    ]
    assert all(r["score"] == 0.0 for r in rows)
    loop = "```python\nwhile True:\n    pass\n```"
    [looped, good] = asyncio.run(
        _both(ours.compute_score_async("apps", loop, STDIO, {"timeout_s": 1}), GOOD)
    )
    assert looped["status_timeout"] == 1.0 and looped["tests_run"] == 1.0
    assert looped["infra_error"] == 0.0 and looped["spec_error"] == 0.0
    assert good["tests_run"] == 2.0 and good["reruns"] == 0.0


async def _both(first: Any, good: str) -> list[dict[str, float]]:
    return [await first, await ours.compute_score_async("apps", good, STDIO)]
