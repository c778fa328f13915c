"""TRL: our reward function inside a real GRPOTrainer step on CPU."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from verifiers.integrations.trl import completion_text, reward_function
from verifiers.runtimes import LocalRuntime

from .conftest import require

TESTS = json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})


def test_reward_function_contract(runtime: LocalRuntime) -> None:
    reward = reward_function("python", tests_column="tests", timeout_s=2)
    logged: dict[str, list[float]] = {}
    extra: dict[str, list[Any]] = {}
    out = reward(
        prompts=["add", "add", "add"],
        completions=[
            "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
            [{"role": "assistant", "content": "```python\nprint(4)\n```"}],
            "no idea",
        ],
        tests=[TESTS, TESTS, TESTS],
        log_metric=lambda name, value: logged.setdefault(name, []).append(value),
        log_extra=lambda column, values: extra.setdefault(column, []).extend(values),
    )
    assert out == [1.0, 0.0, 0.0]
    assert logged["verifiers/status_passed"] == [1 / 3]
    assert extra["verifiers_status"] == ["passed", "failed", "no_code"]
    assert (
        completion_text([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
        == "a"
    )


def test_metrics_keep_bad_data_and_our_faults_apart(runtime: LocalRuntime) -> None:
    logged: dict[str, float] = {}
    extra: dict[str, list[Any]] = {}
    reward = reward_function("python", timeout_s=1)
    loop = "```python\nwhile True:\n    pass\n```"
    ten = json.dumps({"inputs": ["1 2\n"] * 10, "outputs": ["3\n"] * 10})
    out = reward(
        prompts=["p"] * 4,
        completions=["print(3)", loop, "print(3)", "print(3)"],
        tests=[TESTS, ten, '{"inputs": ["1"]}', TESTS],
        log_metric=logged.__setitem__,
        log_extra=lambda column, values: extra.setdefault(column, []).extend(values),
    )
    assert out == [1.0, 0.0, None, 1.0]
    assert extra["verifiers_status"] == ["passed", "timeout", "spec_error", "passed"]
    assert logged["verifiers/spec_error"] == 0.25 and logged["verifiers/infra_error"] == 0.0
    # The looping member of the group ran one of its ten tests (binary ends at a failure).
    assert logged["verifiers/tests_run"] == (1 + 1 + 1) / 3
    broken = LocalRuntime()
    assert broken.check().available
    broken.start_timeout_s = 0.0001
    faulty = reward_function("python", runtime=broken)
    assert faulty(
        prompts=["p"], completions=["print(3)"], tests=[TESTS], log_metric=logged.__setitem__
    ) == [None]
    assert logged["verifiers/infra_error"] == 1.0 and logged["verifiers/spec_error"] == 0.0


def test_infra_fault_is_none(runtime: LocalRuntime) -> None:
    broken = LocalRuntime()
    assert broken.check().available
    broken.start_timeout_s = 0.0001
    reward = reward_function("python", runtime=broken)
    assert reward(prompts=["p"], completions=["print(3)"], tests=[TESTS]) == [None]


def test_grpo_trainer_step(
    tokenizer: Any, tiny_model: Any, tmp_path: Path, runtime: LocalRuntime
) -> None:
    require("trl", "datasets", "torch")
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    dataset = Dataset.from_list(
        [{"prompt": f"Add the numbers {i}", "tests": TESTS} for i in range(4)]
    )
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=8,
        max_steps=1,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        bf16=False,
        save_strategy="no",
        seed=0,
    )
    trainer = GRPOTrainer(
        model=tiny_model,
        reward_funcs=[reward_function("python", tests_column="tests", timeout_s=2)],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    logs = {k: v for entry in trainer.state.log_history for k, v in entry.items()}
    assert trainer.state.global_step == 1
    # A random 2-layer model writes no code: our reward and our status metrics say so.
    assert logs["rewards/verifiers_python/mean"] == 0.0
    shares = [
        logs[f"verifiers/status_{s}"]
        for s in ("no_code", "syntax_error", "failed", "runtime_error")
    ]
    assert sum(shares) == 1.0 and logs["verifiers/infra_error"] == 0.0
