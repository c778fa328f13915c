"""The one place that pulls code out of a model's completion.

A reward that misjudges the format punishes correct code: small models early in RL
write code inside prose, without fences, and that code must still be found. A reward
must also never stall a training step, so every step here is linear in the
completion's size and the parsers see a bounded amount of text (see ``docs/extraction.md``).

Steps:

1. A completion longer than ``max_chars`` is ``no_code`` at once.
2. Reasoning is removed: every ``<think>...</think>`` block; text before a lone
   ``</think>`` (the opening tag was in the prompt); everything after an unclosed
   ``<think>``. One scan over the tags, never a regular expression that could
   rescan the text from every opening tag.
3. Fenced blocks (```` ``` ```` or ``~~~``, three or more, CommonMark rules for
   closing) are collected with their info string. A block tagged with one of the
   language's names is preferred; then untagged blocks (the last one that parses, if
   any parses). ``select="first"`` takes the first instead of the last.
4. Without a usable block, the text outside the blocks is searched (``mode="auto"``):
   its lines are classified as prose, code or undecided by their shape alone;
   prose lines split the text into candidate regions, and each region is checked
   by the language's own syntax check. A region whose first error is on an
   undecided line (a sentence the classifier missed) is split there and its parts
   checked again. The regions that parse are joined when they parse together (a
   helper and the function that uses it), otherwise the largest is taken; code
   with a syntax error (an error on a code line) is reported as such rather than
   replaced by a smaller fragment. Two other modes reproduce common references:
   ``from_def`` (from the first definition to the end) and ``whole`` (the whole
   response).

``format_ok`` is true only when the code came from a closed fenced block, so layered
policies still reward the format.
"""

from __future__ import annotations

import heapq
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from verifiers.parsing import SyntaxIssue

#: How code is found when there is no usable fenced block (see :func:`extract_code`).
Mode = Literal["auto", "from_def", "whole"]
MODES: tuple[str, ...] = ("auto", "from_def", "whole")
#: Completions longer than this many characters are ``no_code`` without being read.
MAX_COMPLETION_CHARS = 1_000_000
#: The most text (characters, in total) the search for code in prose hands to parsers.
#: tree-sitter's error recovery costs up to about 5 microseconds of CPU a character on text
#: that is not code, so this bounds the search to about 0.3 s of CPU whatever the input.
SEARCH_BUDGET_CHARS = 64 * 1024
#: The most parser calls the search for code in prose makes.
SEARCH_CALLS = 32
#: The whole span from the first region to the last (prose between included) is tried
#: first only when at most this many runs of lines make it: prose-like lines inside a
#: string are few, and a long alternation of prose and code must not reach a parser whole.
SPAN_REGIONS = 4
#: Untagged fenced blocks tried with the parser, nearest the selected end first.
BLOCKS_TRIED = 16

Check = Callable[[str], SyntaxIssue | None]

_THINK_TAG = re.compile(r"<(/?)think>", re.IGNORECASE)
# A line that may open or close a fence; the exact CommonMark rules are applied per line.
_FENCE_LINE = re.compile(r"^[^\S\n]*(?:`{3,}|~{3,})", re.MULTILINE)
_FENCE_OPEN = re.compile(r"(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)")


@dataclass(frozen=True)
class Block:
    """A fenced code block.

    Attributes:
        lang: The first word of the info string, lower case (empty when untagged).
        code: The block's content, dedented by the opening fence's indentation.
        closed: A closing fence was found (an unclosed block runs to the end).
        start: Offset of the opening fence line in the text.
        end: Offset just after the closing fence line (or the end of the text).
    """

    lang: str
    code: str
    closed: bool
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class Extraction:
    """What was found in a completion.

    Attributes:
        code: The code to run, or None when there is none.
        format_ok: The code came from a closed fenced block.
        source: ``block``, ``unclosed_block``, ``whole_text`` (the text is the code, nothing
            dropped), ``region`` (code found in prose, the prose dropped) or ``none``.
        reason: Why there is no code (empty when there is).
    """

    code: str | None
    format_ok: bool
    source: Literal["block", "unclosed_block", "whole_text", "region", "none"]
    reason: str = ""


def strip_reasoning(text: str) -> str:
    """Remove ``<think>`` reasoning from a completion (linear in its size).

    Every ``<think>...</think>`` block goes; then, if a ``</think>`` is left (its
    opening tag was in the prompt), the text up to the last one goes; then an
    unclosed ``<think>`` and everything after it go.
    """
    kept: list[str] = []
    position = 0  # start of the text not yet kept or dropped
    opened = -1  # offset of the <think> of the block being read, or -1
    for tag in _THINK_TAG.finditer(text):
        closing = bool(tag.group(1))
        if opened < 0 and not closing:
            kept.append(text[position : tag.start()])
            opened = tag.start()
        elif opened >= 0 and closing:
            opened = -1
            position = tag.end()
        elif closing:
            # A lone </think>: what came before it was reasoning.
            kept = []
            position = tag.end()
    if opened < 0:
        kept.append(text[position:])
    return "".join(kept)


def find_blocks(text: str) -> list[Block]:
    """All fenced code blocks, in order; an unclosed last block runs to the end.

    Only lines that start with a fence are looked at one by one (found by one scan of
    the text), so the cost is linear in the text's size whatever its shape.
    """
    blocks: list[Block] = []
    fences = [m.start() for m in _FENCE_LINE.finditer(text)]
    n = 0
    while n < len(fences):
        start = fences[n]
        line_end = _line_end(text, start)
        opening = _FENCE_OPEN.fullmatch(text, start, line_end)
        n += 1
        if opening is None or (opening.group("fence")[0] == "`" and "`" in opening.group("info")):
            continue
        fence = opening.group("fence")
        indent = len(opening.group("indent"))
        info = opening.group("info").strip()
        lang = info.split()[0].lower().lstrip("{.").rstrip("}") if info else ""
        body_start = min(line_end + 1, len(text))
        closed = False
        body_end = end = len(text)
        while n < len(fences):
            candidate = fences[n]
            candidate_end = _line_end(text, candidate)
            n += 1
            if _closes(text[candidate:candidate_end], fence):
                closed = True
                body_end = candidate
                end = min(candidate_end + 1, len(text))
                break
        body = text[body_start:body_end] if body_start <= body_end else ""
        if indent:
            # CommonMark: remove up to the opening fence's indentation from content lines.
            body = "\n".join(
                line[min(indent, len(line) - len(line.lstrip(" "))) :] for line in body.split("\n")
            )
        code = body.rstrip("\n")
        code = code + "\n" if code else code
        blocks.append(Block(lang=lang, code=code, closed=closed, start=start, end=end))
    return blocks


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _closes(line: str, fence: str) -> bool:
    """Whether a line closes a block opened by ``fence`` (CommonMark)."""
    stripped = line.strip()
    return (
        stripped.startswith(fence[0] * len(fence))
        and set(stripped) == {fence[0]}
        and len(line) - len(line.lstrip(" ")) <= 3
    )


def extract_code(
    completion: str,
    names: Sequence[str],
    parses: Callable[[str], bool],
    select: Literal["last", "first"] = "last",
    *,
    check: Check | None = None,
    mode: Mode = "auto",
    max_chars: int = MAX_COMPLETION_CHARS,
    join: bool = True,
    search_budget: int = SEARCH_BUDGET_CHARS,
) -> Extraction:
    """Pull the code for a language out of a completion.

    Args:
        completion: Raw model output (markdown, prose with code, or bare code).
        names: Info-string names of the language (``python``, ``py``, ...), lower case.
        parses: Whether a text parses as the language (used for untagged blocks, and for
            the whole text when ``check`` is not given).
        select: Which matching block to take when there are several.
        check: The language's syntax check (first error, or None). Given, the code
            inside prose is searched for (``mode="auto"``); not given, the whole text is
            the code only when it parses or looks like code.
        mode: Without a usable fenced block: ``auto`` searches the prose for code,
            ``from_def`` takes the text from the first line that starts a definition
            (``def``, ``class``, ``function``, ``func``, ``fn``, ``package``, ``SELECT``,
            ``WITH``) to the end, ``whole`` takes the whole response.
        max_chars: Longer completions are ``no_code`` at once.
        join: Code regions separated by prose may be joined (a program made of
            definitions); False for languages whose answer is one unit (a SQL query).
        search_budget: The most text (characters, in total) the search hands to ``check``.

    Returns:
        The extraction; ``code`` is None when no code was found.
    """
    if len(completion) > max_chars:
        return Extraction(
            None,
            False,
            "none",
            f"the completion has {len(completion)} characters, more than the limit of "
            f"{max_chars} (max_completion_chars)",
        )
    text = strip_reasoning(completion)
    blocks = find_blocks(text)
    wanted = {n.lower() for n in names}

    tagged = [b for b in blocks if b.lang in wanted and b.code.strip()]
    if tagged:
        return _from_block(tagged[-1] if select == "last" else tagged[0])
    untagged = [b for b in blocks if not b.lang and b.code.strip()]
    if untagged:
        return _from_block(_parsing_block(untagged, parses, select))
    # No usable block: the text around the blocks (if any) is searched.
    rest = _outside(text, blocks) if blocks else text
    if mode == "whole":
        found = Extraction(text, False, "whole_text") if text.strip() else None
    elif mode == "from_def":
        found = _from_definition(rest)
    elif check is None:
        found = _whole_if_code(rest, parses)
    else:
        found = _search(rest, check, parses, join, select, not blocks, search_budget)
    if found is not None:
        return found
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
    if not text.strip():
        return Extraction(None, False, "none", "the completion is empty")
    if mode == "from_def":
        reason = "no fenced code block, and no line starts a definition"
    else:
        reason = "no fenced code block, and the text does not parse as code"
    return Extraction(None, False, "none", reason)


def extract_for(
    language: Any,
    completion: str,
    select: Literal["last", "first"] = "last",
    mode: Mode = "auto",
    max_chars: int = MAX_COMPLETION_CHARS,
    check: Check | None = None,
) -> Extraction:
    """:func:`extract_code` with what a language says about itself.

    A language's ``code_regions`` attribute says how code inside prose is found:
    ``join`` (the default: regions separated by prose may be joined), ``one`` (the
    answer is one unit, such as a SQL query) or ``none`` (no search: the whole text is
    the answer when it parses, as for a regular expression). Its ``search_budget_chars``
    is how much text the search may hand its syntax check (default
    :data:`SEARCH_BUDGET_CHARS`, for tree-sitter's cost on text that is not code; a
    language whose check is linear and cheap allows more).

    Args:
        language: The language (its ``aliases``, ``parses`` and ``check_syntax``).
        completion: Raw model output.
        select: Which matching block to take when there are several.
        mode: See :func:`extract_code`.
        max_chars: See :func:`extract_code`.
        check: The syntax check to use (default: the language's, without a spec).
    """
    regions = getattr(language, "code_regions", "join")
    return extract_code(
        completion,
        language.aliases,
        language.parses,
        select,
        check=None if regions == "none" else (check or language.check_syntax),
        mode=mode,
        max_chars=max_chars,
        join=regions == "join",
        search_budget=int(getattr(language, "search_budget_chars", SEARCH_BUDGET_CHARS)),
    )


def _from_block(block: Block) -> Extraction:
    return Extraction(block.code, block.closed, "block" if block.closed else "unclosed_block")


def _parsing_block(
    blocks: list[Block], parses: Callable[[str], bool], select: Literal["last", "first"]
) -> Block:
    """The selected untagged block that parses; a bounded number of blocks is tried."""
    ordered = blocks[::-1] if select == "last" else blocks
    for block in ordered[:BLOCKS_TRIED]:
        if parses(block.code):
            return block
    return ordered[0]


def _outside(text: str, blocks: list[Block]) -> str:
    """The text with every fenced block replaced by an empty line."""
    parts: list[str] = []
    position = 0
    for block in blocks:
        parts.append(text[position : block.start])
        parts.append("\n")
        position = block.end
    parts.append(text[position:])
    return "".join(parts)


def _never(text: str) -> bool:
    return False


def _whole_if_code(text: str, parses: Callable[[str], bool]) -> Extraction | None:
    if text.strip() and (parses(text) or looks_like_code(text)):
        return Extraction(text, False, "whole_text")
    return None


_DEFINITION = re.compile(
    r"^[ \t]*(?:(?:async|pub|export|pub\(crate\))[ \t]+)*"
    r"(?:def|class|function|func|fn|package|SELECT|WITH)\b",
    re.MULTILINE,
)


def _from_definition(text: str) -> Extraction | None:
    """From the first line that starts a definition to the end (the mint Code RL reference)."""
    first = _DEFINITION.search(text)
    if first is None:
        return None
    return Extraction(text[first.start() :], False, "region")


# --- the shape of a line --------------------------------------------------------------------

_BLANK, _UNDECIDED, _CODE, _PROSE = 0, 1, 2, 3
#: Tokens of a line looked at to classify it: a line of a million words costs no more
#: than reading it once.
_TOKENS = 24
# Statement words of Python, JavaScript, Go, Rust, C, C++ and Java, case-sensitive: a
# sentence starts with a capital letter, so "If the list is empty" is prose and "if n == 0:"
# is code.
_KEYWORDS = frozenset(
    {
        *("assert", "async", "await", "break", "case", "catch", "class", "const", "continue"),
        *("def", "default", "defer", "del", "do", "elif", "else", "enum", "except", "export"),
        *("extern", "finally", "fn", "for", "from", "func", "function", "global", "go", "if"),
        *("impl", "import", "interface", "let", "loop", "match", "mod", "mut", "nonlocal"),
        *("package", "pass", "print", "pub", "raise", "return", "static", "struct", "switch"),
        *("throw", "trait", "try", "type", "unsafe", "use", "var", "where", "while", "with"),
        "yield",
        # C, C++ and Java declarations that start with a word.
        *("namespace", "private", "protected", "public", "template", "typedef", "using"),
    }
)
# Every pattern below is matched at the start of a line and cannot backtrack over more
# than the line once: classifying a line is linear in its length.
_SQL_START = re.compile(
    r"(?:SEL|WITH|INS|UPD|DEL|CREATE|DROP|ALTER|PRAGMA|EXPLAIN|VALUES|REPLACE|FROM|WHERE"
    r"|GROUP|ORDER|HAVING|LIMIT|JOIN|LEFT|INNER|UNION|ATTACH|DETACH|BEGIN|COMMIT|ROLLBACK"
    r"|VACUUM|ANALYZE|SHOW|DESCRIBE|TRUNCATE)[A-Z]*(?!\w)"
)
_SQL_LOWER = re.compile(r"(?:select|with)\s.*\bfrom\b", re.IGNORECASE)
# Python's imports, Go's (`import name "path"`) and JavaScript's (`import x from "m"`).
_IMPORT = re.compile(
    r"(?:import [\w.]+(?: as \w+)?(?:, ?[\w.]+(?: as \w+)?)*|from [\w.]+ import .+"
    r"|import (?:[\w.]+ )?\"[^\"\s]*\"|import [\w$]+ from ([\"'])[^\"'\s]*\1;?)$"
)
# `name = ...`, `a, b = ...`, `x[i] += ...`, `x := ...`
_ASSIGNMENT = re.compile(
    r"[\w$.\[\]]+(?:\s*,\s*[\w$.\[\]]+)*\s*(?:[-+*/%|&^:]|<<|>>|\*\*|//)?=(?!=)"
)
# `f(...)`, `obj.method(...)`, `println!(...)`, `parse::<i64>(...)`
_CALL = re.compile(r"[\w$.]+(?:!|::<[\w:<>, ]*>)?\(")
_CALL_INSIDE = re.compile(r"[\w$]\(")
_COMMENT = re.compile(r"(?://|/\*|\*/|#\[|#!|#[a-z]|--\s|@\w)")
_MARKDOWN = re.compile(r"(?:#{1,6}\s|[-*+]\s+\S|\d{1,3}[.)]\s+\S|\*\*|__|>\s|---|===|\|)")
_CODE_END = frozenset(";{}[](,")
_QUOTES = ('"""', "'''")
_OPERATORS = frozenset("=()[]{}:;<>+-*/%,.&|^!")
_PUNCTUATION = (
    "\"'`()[]{}<>*_,.;:!?\u2018\u2019\u201c\u201d\uff1a\uff0c\u3002\uff01\uff1f\u3001\uff08\uff09"
)


def _is_word(token: str) -> bool:
    """A natural-language word, with its quotes and punctuation (``don't,`` ``(see``)."""
    core = token.strip(_PUNCTUATION)
    return bool(core) and core.replace("'", "").replace("\u2019", "").replace("-", "").isalpha()


def _looks_like_statement(
    stripped: str, first: str, symbols: bool, wordy: bool, ends_sentence: bool
) -> bool:
    """Whether a (non-blank) line reads as a statement of some language."""
    if (_COMMENT.match(stripped) and not _MARKDOWN.match(stripped)) or stripped[:3] in _QUOTES:
        return True
    if ends_sentence:
        return False
    if stripped[-1] == "{" and ")" in stripped:
        return True  # a C-style function head: `vector<int> f(vector<int> v){`
    if first.split("(", 1)[0].rstrip(":;,") in _KEYWORDS:
        # "for x in xs:" is code, "for each element we add one" is not.
        return (
            not wordy or not _OPERATORS.isdisjoint(stripped) or _IMPORT.match(stripped) is not None
        )
    if _SQL_START.match(stripped) or _SQL_LOWER.match(stripped) or _ASSIGNMENT.match(stripped):
        return True
    if wordy:
        return False
    return bool(
        _CALL.match(stripped)
        or (symbols and stripped[-1] in _CODE_END)
        or (stripped[-1] == ")" and _CALL_INSIDE.search(stripped))
    )


def classify(line: str) -> int:
    """The shape of one line: blank, prose, code or undecided (the parser decides).

    Code: a statement word of a language (``def``, ``for``, ``fn``, ``SELECT`` ...) not
    followed by a sentence, an assignment or a call at the start, a comment or an
    attribute, or code punctuation at the end. Prose (only at column 0, since indented
    lines may be a docstring's): a sentence (mostly words), a markdown heading or list
    item, or a short label such as ``Solution:``. Anything else is undecided.
    """
    stripped = line.strip()
    if not stripped:
        return _BLANK
    tokens = stripped.split(None, _TOKENS)[:_TOKENS]
    count = len(tokens)
    words = sum(1 for token in tokens if _is_word(token))
    sentence = count >= 3 and words >= 0.6 * count
    wordy = count >= 3 and words >= 0.75 * count
    ends_sentence = sentence and stripped[-1] in ".!?"
    if _looks_like_statement(stripped, tokens[0], words < count, wordy, ends_sentence):
        return _CODE
    if line[:1] in (" ", "\t"):
        return _UNDECIDED  # indented: inside code (a docstring) as often as prose
    if sentence or _MARKDOWN.match(stripped):
        return _PROSE
    if count <= 2 and words == count and (count == 1 or stripped[-1] in ":.!?"):
        return _PROSE  # "Solution:", "Explanation", "Thanks!"
    return _UNDECIDED


# --- the search for code inside prose -------------------------------------------------------

Range = tuple[int, int]  # lines [a, b)


def _comment_blocks(lines: list[str], kinds: list[int]) -> None:
    """Lines inside a ``/* ... */`` comment opened at the start of a line are not prose.

    A C, C++ or Java prompt opens with such a comment, whose sentences and examples
    would otherwise split the program into runs (one pass: linear in the text).
    """
    inside = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if inside:
            if kinds[i] == _PROSE:
                kinds[i] = _UNDECIDED
            inside = "*/" not in stripped
        elif stripped.startswith("/*") and "*/" not in stripped[2:]:
            inside = True


class _Search:
    """A text's lines, their shapes, and the parser work spent on them so far."""

    def __init__(self, text: str, check: Check, budget: int = SEARCH_BUDGET_CHARS) -> None:
        self.lines = text.split("\n")
        self.kinds = [classify(line) for line in self.lines]
        _comment_blocks(self.lines, self.kinds)
        self.check = check
        # Prefix sums: code lines and characters among lines[:i].
        self.code_before = [0]
        self.chars_before = [0]
        for line, kind in zip(self.lines, self.kinds, strict=True):
            self.code_before.append(self.code_before[-1] + (kind == _CODE))
            self.chars_before.append(self.chars_before[-1] + len(line) + 1)
        self.calls = 0
        self.spent = 0
        self.budget = budget

    def code_lines(self, span: Range) -> int:
        return self.code_before[span[1]] - self.code_before[span[0]]

    def size(self, span: Range) -> int:
        return self.chars_before[span[1]] - self.chars_before[span[0]]

    def text(self, span: Range) -> str:
        return "\n".join(self.lines[span[0] : span[1]]) + "\n"

    def trim(self, a: int, b: int) -> Range:
        """The range without blank or prose lines at its ends."""
        while a < b and self.kinds[a] in (_BLANK, _PROSE):
            a += 1
        while b > a and self.kinds[b - 1] in (_BLANK, _PROSE):
            b -= 1
        return a, b

    def content(self) -> Range:
        """From the first non-blank line to the last."""
        a, b = 0, len(self.lines)
        while a < b and self.kinds[a] == _BLANK:
            a += 1
        while b > a and self.kinds[b - 1] == _BLANK:
            b -= 1
        return a, b

    def runs(self) -> list[Range]:
        """The runs of lines between prose lines (blank lines at their ends dropped)."""
        found = []
        a = 0
        for i, kind in enumerate([*self.kinds, _PROSE]):
            if kind == _PROSE:
                span = self.trim(a, i)
                if span[0] < span[1]:
                    found.append(span)
                a = i + 1
        return found

    def first_error(self, code: str) -> SyntaxIssue | Literal[False] | None:
        """The check on ``code``, or False when the budget of parser work is spent.

        Indented code is dedented first, so that a region indented in prose can parse.
        """
        if self.calls >= SEARCH_CALLS or self.spent + len(code) > self.budget:
            return False
        self.calls += 1
        self.spent += len(code)
        return self.check(textwrap.dedent(code) if code[:1] in (" ", "\t") else code)

    def rank(self, span: Range) -> tuple[int, int]:
        return self.code_lines(span), span[1] - span[0]


def _search(
    text: str,
    check: Check,
    parses: Callable[[str], bool],
    join: bool,
    select: str,
    whole: bool,
    budget: int = SEARCH_BUDGET_CHARS,
) -> Extraction | None:
    """Code inside prose (see the module docstring, step 4)."""
    search = _Search(text, check, budget)
    runs = search.runs()
    # Candidate regions: the runs that hold a line of code.
    regions = [r for r in runs if search.code_lines(r)]
    if not regions:
        # No line reads as code, and none as prose: a statement no rule knows
        # (``ATTACH DATABASE ...``) is the answer if it parses, as bare code always was
        # (parsed only within the search's budget).
        if _PROSE in search.kinds:
            return None
        return _whole_if_code(text, parses if len(text) <= budget else _never)
    content = search.content() if whole else None
    known: dict[Range, SyntaxIssue] = {}
    span = (runs[0][0], runs[-1][1])
    if len(runs) == 1 or (join and len(runs) <= SPAN_REGIONS):
        # Everything between the first run and the last first: lines that look like
        # prose may be inside a string, and undecided runs may be part of the code.
        issue = search.first_error(search.text(span))
        if issue is None:
            return _region(search, [span], content)
        if issue and [span] == regions:
            known[span] = issue
    parsing: list[Range] = []
    # Regions with an error on a code line, regions split at an undecided line, and
    # regions the budget left unchecked: code that does not (or may not) parse.
    unparsed: list[Range] = []
    heap = [(-search.size(r), r) for r in regions]
    heapq.heapify(heap)
    while heap:
        span = heapq.heappop(heap)[1]
        issue = known.pop(span, None) or search.first_error(search.text(span))
        if issue is None:
            parsing.append(span)
            continue
        unparsed.append(span)
        if issue is False:
            continue
        line = min(max(span[0] + issue.line - 1, span[0]), span[1] - 1)
        if search.kinds[line] == _CODE:
            continue  # the code itself is broken: a syntax error, not prose
        for part in (search.trim(span[0], line), search.trim(line + 1, span[1])):
            if search.code_lines(part):
                heapq.heappush(heap, (-search.size(part), part))
    best = _best(search, parsing, join, select)
    found = sum(search.code_lines(r) for r in best)
    if unparsed:
        broken = max(unparsed, key=search.rank)
        if search.code_lines(broken) > found:
            best = [broken]  # more code than what parses: report its syntax error
    return _region(search, best, content) if best else None


def _best(search: _Search, parsing: list[Range], join: bool, select: str) -> list[Range]:
    """The regions that parse joined, when they parse together; else the largest."""
    if not parsing:
        return []
    parsing.sort()
    if len(parsing) > 1 and join:
        joined = "\n".join(search.text(r) for r in parsing)
        if search.first_error(joined) is None:
            return parsing
    top = max(search.rank(r) for r in parsing)
    ties = [r for r in parsing if search.rank(r) == top]
    return [ties[-1] if select == "last" else ties[0]]


def _region(search: _Search, ranges: list[Range], content: Range | None) -> Extraction:
    if content is not None and ranges == [content]:
        return Extraction("\n".join(search.lines), False, "whole_text")
    return Extraction("\n".join(search.text(r) for r in ranges), False, "region")


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


def looks_like_code(text: str) -> bool:
    """Whether most non-empty lines look like code rather than prose."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    codeish = sum(1 for line in lines if _CODE_LINE.match(line) or line.rstrip()[-1] in ";{}()[],")
    return codeish * 2 >= len(lines) + (1 if len(lines) == 1 else 0)
