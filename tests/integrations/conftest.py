"""Tiny models and tokenizers built locally (nothing is downloaded)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from ..conftest import need

CORPUS = [
    "def add(a, b):\n    return a + b\n",
    "```python\nprint(sum(map(int, input().split())))\n```\n",
    "import sys\nfor line in sys.stdin:\n    print(line.strip()[::-1])\n",
    "SELECT name FROM singer WHERE age > 40;\n",
    "a+b [0-9]{3} (x|y)* ^abc$ \\d+ \\w+ [a-z]+\n",
    "You are an expert programmer. Answer with one code block.\n",
] * 20
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def require(*modules: str) -> None:
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as err:
            need(
                False, f"{module} is not installed (pip install verifiers-sdk[integrations]): {err}"
            )


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    require("tokenizers", "transformers")
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        CORPUS, vocab_size=400, min_frequency=1, special_tokens=["<pad>", "<s>", "</s>"]
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    tok.chat_template = CHAT_TEMPLATE
    return tok


@pytest.fixture()
def tiny_model(tokenizer: Any) -> Any:
    require("torch", "transformers")
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config)
