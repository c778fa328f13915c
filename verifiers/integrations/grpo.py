"""A GRPO adapter in the style of mint / Tinker cookbooks, and a compact reference loop.

    adapter = CodeRLAdapter(language="python", max_tests_per_problem=10)
    ids = adapter.make_prompt(sample, tokenizer)          # chat-templated prompt tokens
    reward = adapter.compute_reward(response, sample)     # verified in the sandbox
    advantages = group_advantages(rewards, group_size=cfg.group)

:func:`run_grpo` is a small on-policy GRPO loop on a local transformers model with LoRA
(peft): sample a group of completions per prompt, score them with the adapter, centre the
rewards within each group, and take a policy-gradient step. It exists to make the adapter
testable end to end and to document the data flow; use TRL or veRL for real training.
torch, transformers and peft are imported only when it runs.
"""

from __future__ import annotations

import logging
import math
import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import verifiers
from verifiers.limits import Limits

log = logging.getLogger("verifiers.integrations.grpo")

DEFAULT_SYSTEM = (
    "You are an expert programmer. Answer with one {language} code block that solves the "
    "task. Reason briefly if you need to, but put the complete solution in a single fenced "
    "```{language}``` block."
)


def _env(name: str, default: Any, kind: Callable[[str], Any]) -> Any:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return kind(value)
    except ValueError:
        raise verifiers.SpecError(name, f"cannot read {value!r} as {kind.__name__}") from None


@dataclass
class RLConfig:
    """Settings of a GRPO run. Defaults can be set with ``MINT_RL_*`` environment variables.

    Attributes:
        steps: Optimisation steps (``MINT_RL_STEPS``).
        batch: Prompts per step (``MINT_RL_BATCH``).
        group: Completions sampled per prompt (``MINT_RL_GROUP``).
        learning_rate: Adam learning rate (``MINT_RL_LR``).
        max_tokens: Longest completion, in tokens (``MINT_RL_MAX_TOKENS``).
        temperature: Sampling temperature.
        base_model: Model to start from when none is given.
        rank: LoRA rank.
        seed: Seed for prompt sampling and generation.
    """

    steps: int = field(default_factory=lambda: _env("MINT_RL_STEPS", 20, int))
    batch: int = field(default_factory=lambda: _env("MINT_RL_BATCH", 8, int))
    group: int = field(default_factory=lambda: _env("MINT_RL_GROUP", 4, int))
    learning_rate: float = field(default_factory=lambda: _env("MINT_RL_LR", 1e-5, float))
    max_tokens: int = field(default_factory=lambda: _env("MINT_RL_MAX_TOKENS", 512, int))
    temperature: float = 1.0
    base_model: str = "Qwen/Qwen2.5-Coder-0.5B-Instruct"
    rank: int = 16
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "group", "max_tokens", "rank"):
            if getattr(self, name) < 1:
                raise verifiers.SpecError(name, f"must be at least 1, got {getattr(self, name)}")
        if self.learning_rate <= 0 or self.temperature <= 0:
            raise verifiers.SpecError("learning_rate", "learning_rate and temperature must be > 0")


class CodeRLAdapter:
    """Prompts and rewards for code RL on any verifiers language.

    Args:
        language: Language of the answers.
        fewshot: Worked examples, each ``{"prompt": ..., "response": ...}``, put before the task.
        sandbox_timeout_s: Wall-clock limit per test.
        max_tests_per_problem: Tests run per problem (a deterministic sample).
        partial_credit: Reward the fraction of tests passed instead of all-or-nothing.
        system_prompt: The system message (``{language}`` is filled in).
        prompt_key: Sample field with the task text.
        tests_key: Sample field with the tests.
    """

    def __init__(
        self,
        language: str = "python",
        fewshot: Sequence[Mapping[str, str]] = (),
        sandbox_timeout_s: float = 5.0,
        max_tests_per_problem: int = 10,
        partial_credit: bool = False,
        system_prompt: str | None = None,
        prompt_key: str = "prompt",
        tests_key: str = "tests",
    ) -> None:
        self.language = language
        self.fewshot = list(fewshot)
        self.limits = Limits(timeout_s=sandbox_timeout_s)
        self.max_tests = max_tests_per_problem
        self.policy = "partial" if partial_credit else "binary"
        self.system_prompt = (system_prompt or DEFAULT_SYSTEM).replace("{language}", language)
        self.prompt_key = prompt_key
        self.tests_key = tests_key
        self.verifier = verifiers.get_verifier(
            language, policy=self.policy, limits=self.limits, max_tests=self.max_tests
        )

    def messages(self, sample: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat: system message, few-shot examples, then the task."""
        chat = [{"role": "system", "content": self.system_prompt}]
        for shot in self.fewshot:
            chat.append({"role": "user", "content": shot["prompt"]})
            chat.append({"role": "assistant", "content": shot["response"]})
        chat.append({"role": "user", "content": str(sample[self.prompt_key])})
        return chat

    def make_prompt(self, sample: Mapping[str, Any], tokenizer: Any) -> list[int]:
        """Prompt tokens, with the tokenizer's chat template when it has one."""
        chat = self.messages(sample)
        if getattr(tokenizer, "chat_template", None):
            ids = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)
            if isinstance(ids, Mapping):  # newer transformers return a BatchEncoding
                ids = ids["input_ids"]
            return list(ids)
        text = "\n\n".join(f"{m['role']}: {m['content']}" for m in chat) + "\n\nassistant: "
        return list(tokenizer(text)["input_ids"])

    def compute_reward(self, response: str, sample: Mapping[str, Any]) -> float:
        """The verifier's score for one response (0 for an infrastructure fault, logged)."""
        return self.compute_rewards([response], [sample])[0]

    def compute_rewards(
        self, responses: Sequence[str], samples: Sequence[Mapping[str, Any]]
    ) -> list[float]:
        """Scores for many responses, verified concurrently."""
        items = [
            {"language": self.language, "completion": r, "tests": s[self.tests_key]}
            for r, s in zip(responses, samples, strict=True)
        ]
        results = verifiers.score_batch(
            items, policy=self.policy, limits=self.limits, max_tests=self.max_tests
        )
        for result in results:
            if result.infra_error:
                log.warning("reward infrastructure fault, scored 0: %s", result.feedback[:200])
        return [result.score for result in results]


def group_advantages(
    rewards: Sequence[float], group_size: int, normalize_std: bool = False, eps: float = 1e-6
) -> list[float]:
    """GRPO advantages: each reward minus the mean of its group (optionally over the group's std).

    ``rewards`` holds consecutive groups of ``group_size`` completions of one prompt. A group
    whose rewards are all equal has zero advantages (no learning signal).
    """
    if group_size < 1 or len(rewards) % group_size:
        raise verifiers.SpecError(
            "group_size", f"{len(rewards)} rewards do not split into groups of {group_size}"
        )
    out: list[float] = []
    for start in range(0, len(rewards), group_size):
        group = [float(r) for r in rewards[start : start + group_size]]
        mean = sum(group) / len(group)
        centred = [r - mean for r in group]
        if normalize_std:
            std = math.sqrt(sum(c * c for c in centred) / len(group))
            centred = [c / (std + eps) for c in centred]
        out.extend(centred)
    return out


@dataclass
class StepStats:
    """What one GRPO step did."""

    step: int
    reward_mean: float
    reward_max: float
    loss: float
    signal: float  # share of completions with a non-zero advantage
    responses: list[str] = field(default_factory=list)


def run_grpo(
    adapter: CodeRLAdapter,
    cfg: RLConfig,
    samples: Sequence[Mapping[str, Any]],
    model: Any = None,
    tokenizer: Any = None,
    on_step: Callable[[StepStats], None] | None = None,
) -> list[StepStats]:
    """A compact GRPO loop: sample groups, verify, centre rewards per group, update LoRA weights.

    Args:
        adapter: Prompts and rewards.
        cfg: Settings.
        samples: Problems (with the adapter's prompt and tests keys).
        model: A causal LM (default: ``cfg.base_model`` from the Hugging Face cache).
        tokenizer: Its tokenizer.
        on_step: Called with each step's statistics.

    Returns:
        The statistics of every step.
    """
    import torch
    from peft import LoraConfig, get_peft_model

    if not samples:
        raise verifiers.SpecError("samples", "no problems to train on")
    if model is None or tokenizer is None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = tokenizer or AutoTokenizer.from_pretrained(cfg.base_model)
        model = model or AutoModelForCausalLM.from_pretrained(cfg.base_model)
    torch.manual_seed(cfg.seed)
    chooser = random.Random(cfg.seed)
    lora = LoraConfig(
        r=cfg.rank,
        lora_alpha=2 * cfg.rank,
        target_modules="all-linear",
        lora_dropout=0.0,
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora)
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=cfg.learning_rate
    )
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    history = []
    for step in range(cfg.steps):
        batch = [samples[chooser.randrange(len(samples))] for _ in range(cfg.batch)]
        sequences, prompt_lengths, responses, problems = [], [], [], []
        model.eval()
        with torch.no_grad():
            for sample in batch:
                prompt = torch.tensor([adapter.make_prompt(sample, tokenizer)])
                out = model.generate(
                    input_ids=prompt,
                    attention_mask=torch.ones_like(prompt),
                    do_sample=True,
                    temperature=cfg.temperature,
                    max_new_tokens=cfg.max_tokens,
                    num_return_sequences=cfg.group,
                    pad_token_id=pad,
                )
                for row in out:
                    sequences.append(row)
                    prompt_lengths.append(prompt.shape[1])
                    responses.append(
                        tokenizer.decode(row[prompt.shape[1] :], skip_special_tokens=True)
                    )
                    problems.append(sample)
        rewards = adapter.compute_rewards(responses, problems)
        advantages = group_advantages(rewards, cfg.group)
        model.train()
        optimizer.zero_grad()
        losses = []
        for seq, start, advantage in zip(sequences, prompt_lengths, advantages, strict=True):
            if advantage == 0.0 or seq.shape[0] <= start:
                continue
            logits = model(input_ids=seq.unsqueeze(0)).logits[0, :-1]
            targets = seq[1:]
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            taken = logprobs[start - 1 :].gather(1, targets[start - 1 :].unsqueeze(1)).squeeze(1)
            loss = -advantage * taken.mean() / len(sequences)
            loss.backward()  # type: ignore[no-untyped-call]
            losses.append(float(loss.detach()))
        if losses:
            optimizer.step()
        stats = StepStats(
            step=step,
            reward_mean=sum(rewards) / len(rewards),
            reward_max=max(rewards),
            loss=sum(losses),
            signal=sum(a != 0.0 for a in advantages) / len(advantages),
            responses=responses,
        )
        history.append(stats)
        log.info("step %d: reward %.3f, loss %.4f", step, stats.reward_mean, stats.loss)
        if on_step is not None:
            on_step(stats)
    return history


__all__ = ["CodeRLAdapter", "RLConfig", "StepStats", "group_advantages", "run_grpo"]
