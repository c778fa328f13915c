"""Two tiny checkpoints for trying ``verifiers eval`` on a CPU, offline, in seconds.

* ``base``: a 2-layer Llama-architecture model with random weights and a byte-level BPE
  tokenizer trained here on the benchmark's own text (no download);
* ``trained``: the same model fine-tuned until it answers the first ``--memorize`` MBPP
  problems with their reference solutions (a stand-in for a trained checkpoint whose
  improvement the report must show).

Usage: ``.venv/bin/python examples/eval/tiny_models.py OUT_DIR [--memorize 3]``; then
``verifiers eval --model OUT_DIR/base --dataset mbpp --limit 5 ...``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ["<|pad|>", "<|im_start|>", "<|im_end|>"]


def mbpp_pairs(count: int) -> tuple[list[Any], list[str]]:
    """The first MBPP problems (as ``verifiers eval`` sees them) and their references.

    MBPP is the shared copy when present, else the bundled sample, as for ``verifiers eval``.
    """
    from verifiers.eval.problems import load_problems
    from verifiers.testing.datasets import dataset

    problems = load_problems("mbpp", limit=count)
    codes = [row["code"] for row in dataset("mbpp_sanitized").rows()][:count]
    return problems, [f"```python\n{code.strip()}\n```" for code in codes]


def build(out: Path, memorize: int = 3, steps: int = 200, seed: int = 0) -> tuple[Path, Path]:
    """Write ``out/base`` and ``out/trained``; returns their paths."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    problems, answers = mbpp_pairs(max(memorize, 8))
    corpus = [m["content"] for p in problems for m in p.messages] + answers
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=2000, min_frequency=1, special_tokens=SPECIALS)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        pad_token="<|pad|>",
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
    )
    tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=96,
        intermediate_size=192,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    base, trained = out / "base", out / "trained"
    for path in (base, trained):
        path.mkdir(parents=True, exist_ok=True)
        tok.save_pretrained(path)
    model.save_pretrained(base)

    # Teacher forcing on the answers of the first `memorize` problems only.
    examples = []
    for problem, answer in zip(problems[:memorize], answers[:memorize], strict=True):
        prompt = tok.apply_chat_template(
            problem.messages, add_generation_prompt=True, tokenize=False
        )
        p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
        a_ids = tok(answer + "<|im_end|>", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([p_ids + a_ids])
        labels = torch.tensor([[-100] * len(p_ids) + a_ids])
        examples.append((ids, labels))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        ids, labels = examples[step % len(examples)]
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    model.save_pretrained(trained)
    (out / "chat_template.jinja").write_text(CHAT_TEMPLATE)
    return base, trained


def main() -> None:
    """Build both checkpoints into the directory given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--memorize", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    base, trained = build(args.out, args.memorize, args.steps)
    print(f"base: {base}\ntrained: {trained}")


if __name__ == "__main__":
    main()
