"""The one place that pulls code out of a model's completion.

Steps:

1. Reasoning is removed: every ``<think>...</think>`` block; text before a lone
   ``</think>`` (the opening tag was in the prompt); everything after an
   unclosed ``<think>``.
2. Fenced blocks (```` ``` ```` or ``~~~``, three or more, CommonMark rules for
   closing) are collected with their info string. A block tagged with one of
   the language's names is preferred; then untagged blocks (the last one that
   parses, if any parses). ``select="first"`` takes the first instead of the last.
3. Without any block, the whole text is used if it parses as the language,
   or if it looks like code rather than prose (most of its lines start with a
   keyword or an assignment or end in code punctuation): then a syntax error
   is reported as such. Otherwise there is no code.

``format_ok`` is true when the code came from a closed fenced block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    """A fenced code block."""

    lang: str
    code: str
    closed: bool


@dataclass(frozen=True)
class Extraction:
    """What was found in a completion.

    Attributes:
        code: The code to run, or None when there is none.
        format_ok: The code came from a closed fenced block.
        source: ``block``, ``unclosed_block``, ``whole_text`` or ``none``.
        reason: Why there is no code (empty when there is).
    """

    code: str | None
    format_ok: bool
    source: Literal["block", "unclosed_block", "whole_text", "none"]
    reason: str = ""


def strip_reasoning(text: str) -> str:
    """Remove ``<think>`` reasoning from a completion."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text


def find_blocks(text: str) -> list[Block]:
    """All fenced code blocks, in order; an unclosed last block runs to the end."""
    blocks: list[Block] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if m is None or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        fence = m.group("fence")
        indent = len(m.group("indent"))
        info = m.group("info").strip()
        lang = info.split()[0].lower().lstrip("{.").rstrip("}") if info else ""
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            stripped = lines[j].strip()
            if (
                stripped.startswith(fence[0] * len(fence))
                and set(stripped) == {fence[0]}
                and len(lines[j]) - len(lines[j].lstrip(" ")) <= 3
            ):
                closed = True
                break
            line = lines[j]
            # CommonMark: remove up to the opening fence's indentation from content lines.
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            j += 1
        code = "\n".join(body).rstrip("\n")
        blocks.append(Block(lang=lang, code=code + "\n" if code else code, closed=closed))
        i = j + 1
    return blocks


def extract_code(
    completion: str,
    names: Sequence[str],
    parses: Callable[[str], bool],
    select: Literal["last", "first"] = "last",
) -> Extraction:
    """Pull the code for a language out of a completion.

    Args:
        completion: Raw model output (markdown or bare code).
        names: Info-string names of the language (``python``, ``py``, ...), lower case.
        parses: Whether a text parses as the language (used for untagged text).
        select: Which matching block to take when there are several.

    Returns:
        The extraction; ``code`` is None when no code was found.
    """
    text = strip_reasoning(completion)
    blocks = find_blocks(text)
    wanted = {n.lower() for n in names}

    def pick(seq: list[Block]) -> Block:
        return seq[-1] if select == "last" else seq[0]

    tagged = [b for b in blocks if b.lang in wanted and b.code.strip()]
    if tagged:
        return _from_block(pick(tagged))
    untagged = [b for b in blocks if not b.lang and b.code.strip()]
    if untagged:
        parsing = [b for b in untagged if parses(b.code)]
        return _from_block(pick(parsing or untagged))
    if blocks:
        langs = sorted({b.lang for b in blocks if b.lang})
        if langs:
            return Extraction(
                None,
                False,
                "none",
                f"found code blocks tagged {', '.join(langs)} but none tagged "
                f"{' or '.join(sorted(wanted))}",
            )
        return Extraction(None, False, "none", "the code blocks in the completion are empty")
    if text.strip() and (parses(text) or looks_like_code(text)):
        return Extraction(text, False, "whole_text")
    if not text.strip():
        return Extraction(None, False, "none", "the completion is empty")
    return Extraction(
        None, False, "none", "no fenced code block, and the text does not parse as code"
    )


_CODE_LINE = re.compile(
    r"""^\s*(?:
        (?:def|class|import|from|return|if|elif|else|for|while|try|except|finally|with|
           print|raise|assert|async|await|lambda|yield|fn|let|const|var|function|func|
           package|use|pub|struct|impl|enum|match|SELECT|INSERT|UPDATE|DELETE|CREATE|WITH)\b
        | [#@]|//|/\*|\*/
        | [\w.\[\]]+\s*(?:[-+*/%|&^]?=|\()
    )""",
    re.VERBOSE,
)
_CODE_END = re.compile(r"[;{}()\[\],]\s*$")


def looks_like_code(text: str) -> bool:
    """Whether most non-empty lines look like code rather than prose."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    codeish = sum(1 for line in lines if _CODE_LINE.match(line) or _CODE_END.search(line))
    return codeish * 2 >= len(lines) + (1 if len(lines) == 1 else 0)


def _from_block(block: Block) -> Extraction:
    return Extraction(block.code, block.closed, "block" if block.closed else "unclosed_block")
