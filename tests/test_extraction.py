"""Code extraction from completions."""

from __future__ import annotations

from verifiers.extraction import extract_code, find_blocks, looks_like_code, strip_reasoning
from verifiers.languages.python import PythonLanguage

PY = PythonLanguage()
NAMES = PY.aliases


def extract(text: str, select: str = "last"):  # type: ignore[no-untyped-def]
    return extract_code(text, NAMES, PY.parses, select)  # type: ignore[arg-type]


def test_last_python_block_wins_by_default() -> None:
    text = "```python\nx = 1\n```\nthen\n```py\nx = 2\n```\n"
    assert extract(text).code == "x = 2\n"
    assert extract(text, "first").code == "x = 1\n"
    assert extract(text).format_ok


def test_tagged_block_beats_untagged_and_other_languages() -> None:
    text = "```\n3 4\n```\n```javascript\nlet x\n```\n```python\nprint(1)\n```\n```\nout\n```"
    assert extract(text).code == "print(1)\n"


def test_untagged_block_that_parses_is_preferred() -> None:
    text = "Example:\n```\n3 4 (\n```\nCode:\n```\nprint(sum(map(int, input().split())))\n```\n"
    found = extract(text)
    assert found.code is not None and found.code.startswith("print(")


def test_tilde_fences_and_longer_fences() -> None:
    assert extract("~~~python\na = 1\n~~~\n").code == "a = 1\n"
    assert extract("````python\ns = '```'\n````\n").code == "s = '```'\n"


def test_unclosed_block_is_used_but_format_not_ok() -> None:
    found = extract("Here:\n```python\ndef f():\n    return 1\n")
    assert found.code == "def f():\n    return 1\n"
    assert not found.format_ok and found.source == "unclosed_block"


def test_think_blocks_are_removed() -> None:
    text = "<think>```python\nwrong = 1\n```</think>\n```python\nright = 1\n```"
    assert extract(text).code == "right = 1\n"
    assert strip_reasoning("prompt part</think>answer") == "answer"
    assert strip_reasoning("answer <think> never closed ```python\nx\n```") == "answer "


def test_bare_code_is_used_only_when_it_parses_or_looks_like_code() -> None:
    found = extract("def f():\n    return 1\n")
    assert found.code is not None and not found.format_ok and found.source == "whole_text"
    broken = extract("def f(:\n    return 1\n")
    assert broken.code is not None  # reported later as a syntax error, not as no code
    prose = extract("I do not know how to solve this problem.")
    assert prose.code is None and "does not parse" in prose.reason


def test_blocks_in_another_language_only() -> None:
    found = extract("```rust\nfn main() {}\n```")
    assert found.code is None and "rust" in found.reason


def test_empty_completion() -> None:
    assert extract("").code is None
    assert extract("```python\n```").code is None


def test_nul_bytes_and_unicode_do_not_break_extraction() -> None:
    found = extract("```python\nprint('é\u2028')\x00\n```")
    assert found.code is not None


def test_indented_fence_content_is_dedented() -> None:
    blocks = find_blocks("  ```python\n  x = 1\n    y = 2\n  ```")
    assert blocks[0].code == "x = 1\n  y = 2\n"


def test_looks_like_code() -> None:
    assert looks_like_code("x = compute(1)\nprint(x)")
    assert not looks_like_code("The answer is that you should sort the list.")
