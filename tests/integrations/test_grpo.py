"""The GRPO adapter, group advantages, and the reference loop end to end on CPU."""

from __future__ import annotations

import math
from typing import Any

import pytest

from verifiers import SpecError
from verifiers.integrations.grpo import CodeRLAdapter, RLConfig, group_advantages, run_grpo
from verifiers.runtimes import LocalRuntime

from .conftest import require


def test_group_advantages() -> None:
    assert group_advantages([1, 0, 0, 1, 1, 1], 3) == pytest.approx(
        [2 / 3, -1 / 3, -1 / 3, 0, 0, 0]
    )
    normed = group_advantages([1.0, 0.0], 2, normalize_std=True)
    assert normed == pytest.approx([1.0, -1.0], abs=1e-4)
    with pytest.raises(SpecError, match="group_size"):
        group_advantages([1, 2, 3], 2)


def test_config_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINT_RL_STEPS", "7")
    monkeypatch.setenv("MINT_RL_BATCH", "3")
    monkeypatch.setenv("MINT_RL_GROUP", "5")
    monkeypatch.setenv("MINT_RL_LR", "0.001")
    monkeypatch.setenv("MINT_RL_MAX_TOKENS", "64")
    cfg = RLConfig()
    assert (cfg.steps, cfg.batch, cfg.group, cfg.learning_rate, cfg.max_tokens) == (
        7,
        3,
        5,
        0.001,
        64,
    )
    assert RLConfig(steps=2).steps == 2
    monkeypatch.setenv("MINT_RL_STEPS", "many")
    with pytest.raises(SpecError, match="MINT_RL_STEPS"):
        RLConfig()


def test_adapter_prompt_and_reward(tokenizer: Any, runtime: LocalRuntime) -> None:
    adapter = CodeRLAdapter(
        language="python",
        fewshot=[{"prompt": "Print 1.", "response": "```python\nprint(1)\n```"}],
        sandbox_timeout_s=2,
        max_tests_per_problem=2,
    )
    sample = {
        "prompt": "Add two numbers.",
        "tests": {"inputs": ["1 2", "3 4", "5 6"], "outputs": ["3", "7", "11"]},
    }
    ids = adapter.make_prompt(sample, tokenizer)
    text = tokenizer.decode(ids)
    assert "<|system|>" in text and "Print 1." in text and text.endswith("<|assistant|>")
    good = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    assert adapter.compute_reward(good, sample) == 1.0
    assert adapter.compute_reward("```python\nprint(3)\n```", sample) in (0.0,)
    partial = CodeRLAdapter(language="python", partial_credit=True, max_tests_per_problem=3)
    assert partial.compute_reward("```python\nprint(3)\n```", sample) == pytest.approx(1 / 3)


def test_run_grpo_end_to_end(tokenizer: Any, tiny_model: Any, runtime: LocalRuntime) -> None:
    require("torch", "peft")
    # Regex answers: any short text is a pattern, so a random model's answers get
    # different partial scores, and the group advantages carry a signal.
    adapter = CodeRLAdapter(language="regex", partial_credit=True, sandbox_timeout_s=2)
    samples = [
        {
            "prompt": "Digits only.",
            "tests": {
                "positive": ["1", "22", "333"],
                "negative": ["a", "b1", " "],
                "mode": "search",
            },
        }
    ]
    cfg = RLConfig(
        steps=3, batch=2, group=4, learning_rate=5e-2, max_tokens=4, rank=4, temperature=1.5, seed=1
    )
    seen = []
    history = run_grpo(
        adapter, cfg, samples, model=tiny_model, tokenizer=tokenizer, on_step=seen.append
    )
    assert len(history) == 3 and seen == history
    assert all(math.isfinite(s.loss) for s in history)
    rewards = [s.reward_mean for s in history]
    assert all(0.0 <= r <= 1.0 for r in rewards)
    assert any(s.signal > 0 for s in history), [s.responses for s in history]
    changed = [
        name
        for name, param in tiny_model.named_parameters()
        if "lora_B" in name and param.detach().abs().sum() > 0
    ]
    # peft starts every LoRA B matrix at zero: any non-zero one was moved by an update.
    assert changed, "no LoRA weight moved"
