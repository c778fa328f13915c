"""Regex harness: one test of a candidate pattern, inside the sandbox.

Called as ``main([program_dir, index, node])``. Tests are numbered positives, then
negatives, then cases, then (when there is a gold pattern) the equivalence test.
Writes one JSON record on fd 3: ``syntax_error`` (the flavour's compiler refused the
pattern, with its position), ``case`` (what the pattern did with the string), or
``equivalence``: equal, or the shortest string on which the patterns disagree, with
``undecidable`` (the reason) when the automata could not decide it and the engines
compared the patterns on generated and example strings instead (see below).
Catastrophic backtracking ends with the sandbox's timeout, never in the caller.

Equivalence is decided with automata built here, with each flavour's own semantics:

* Python ``re``, ``regex`` and RE2 patterns are read by CPython's own regex parser
  (``re._parser``), so groups, flags (global and scoped), repeats and escapes are what
  CPython reads; what each node *means* is the flavour's. Anchors: Python's and regex's
  ``$`` also matches before a final newline, ``\\Z`` only at the end, ``^`` and ``$``
  per line with MULTILINE; RE2's ``$`` is the end of the text. Word boundaries use the
  flavour's word characters (RE2: ASCII). Every character class (``\\w``, ``\\d``,
  ``\\s``, sets, negations) and every case-insensitive literal or set is computed by
  asking the flavour's engine itself which characters it matches, so Unicode tables and
  case folding are the engine's, not a copy of them.
* JavaScript patterns are read by a parser of ECMAScript's grammar (no flags, Annex B
  as V8 applies it) over UTF-16 code units, as V8 matches them: ``.`` excludes the four
  line terminators, ``\\s`` is ECMAScript's white space, ``\\w``, ``\\d`` and ``\\b`` are
  ASCII, ``^`` and ``$`` are the input's ends.

Lookarounds whose body matches the empty string are modelled exactly (a positive one
is always true, a negative one never), and so are repeats of nothing (``x{0}``): a
construct that changes nothing never takes a pattern out of the model. Other
constructs outside it (backreferences, other lookarounds, atomic groups, possessive
repeats, the regex module's full case folding, syntax CPython cannot read) leave the
verdict to the engines. The model is never trusted blindly: before a verdict, each
automaton is checked against its real engine on a probe set (the shortest string
reaching every pair of states explored, variants with other characters of each class,
random strings, the example strings); any disagreement leaves it to the engines too, so
a construct the model gets wrong gives "not decidable", not a wrong verdict.

Undecided is never a pass by itself: the engines then judge the examples and a few
thousand strings drawn from the gold pattern's automaton (every transition, members,
near-misses of members, strings of the complement) and, when the candidate has an
automaton, from the candidate's; any disagreement is a witness. Agreement passes when the
gold's automaton was built and agrees with its engine on those strings (``basis``
"generated"); when the gold itself is outside the model, only agreement on example
strings can pass (``basis`` "examples"), as before. The candidate decides neither which
strings are drawn from the gold nor whether the gold can be modelled.
"""

from __future__ import annotations

import bisect
import collections
import importlib
import itertools
import json
import os
import random
import subprocess
import sys
import time
import warnings
import zlib
from collections.abc import Iterable
from typing import Any

#: The program's files by absolute path when a warm sandbox keeps them in memory (the
#: sandbox agent sets this after loading the harness); otherwise they are on disk.
PROGRAM_FILES: dict[str, bytes] = {}


def program_file(directory: str, name: str) -> bytes:
    path = os.path.join(directory, name)
    data = PROGRAM_FILES.get(path)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    return data


CHANNEL_FD = 3
NONCE_FD = 4
_PRINTABLE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:;!?@#%&*+=/"
#: Bounds of the automata (beyond: not decidable here, decided on the examples).
MAX_NFA_STATES = 20_000
MAX_DFA_STATES = 5_000
MAX_PAIRS = 20_000
MAX_PROBES = 1_500


def emit(record: dict[str, Any]) -> None:
    data = (json.dumps(record) + "\n").encode("utf-8", errors="surrogatepass")
    try:
        os.write(CHANNEL_FD, data)
    except OSError:
        pass


def read_nonce() -> str:
    try:
        return os.read(NONCE_FD, 256).decode(errors="replace").strip()
    except OSError:
        return ""


def compile_pattern(flavor: str, pattern: str) -> Any:
    if flavor == "python":
        import re

        return re.compile(pattern)
    if flavor == "regex":
        import regex

        return regex.compile(pattern, regex.VERSION1)
    import re2

    return re2.compile(pattern)


def run_case(compiled: Any, mode: str, case: dict[str, Any]) -> dict[str, Any]:
    text = case["text"]
    method = getattr(compiled, mode)
    found = method(text)
    record: dict[str, Any] = {"event": "case", "matched": found is not None}
    if case.get("groups") is not None and found is not None:
        record["groups"] = list(found.groups())
    if case.get("replace") is not None:
        record["replaced"] = compiled.sub(case["replace"], text)
    return record


# --- character sets: sorted, disjoint, inclusive intervals of code points ----------------

Iv = tuple[tuple[int, int], ...]


def iv_norm(pairs: Iterable[tuple[int, int]]) -> Iv:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(pairs):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def iv_of(points: Iterable[int]) -> Iv:
    return iv_norm((p, p) for p in points)


def iv_union(*sets: Iv) -> Iv:
    return iv_norm(pair for s in sets for pair in s)


def iv_minus(a: Iv, b: Iv) -> Iv:
    """``a`` without ``b`` (one pass over both)."""
    out = []
    j = 0
    for start, hi in a:
        lo = start
        while j < len(b) and b[j][1] < lo:
            j += 1
        k = j
        while k < len(b) and b[k][0] <= hi and lo <= hi:
            if b[k][0] > lo:
                out.append((lo, b[k][0] - 1))
            lo = max(lo, b[k][1] + 1)
            k += 1
        if lo <= hi:
            out.append((lo, hi))
    return tuple(out)


def iv_and(a: Iv, b: Iv) -> Iv:
    return iv_minus(a, iv_minus(a, b))


def iv_has(a: Iv, x: int) -> bool:
    n = bisect.bisect_right(a, (x, 0x110000)) - 1
    return n >= 0 and a[n][0] <= x <= a[n][1]


def iv_points(a: Iv) -> Iterable[int]:
    for lo, hi in a:
        yield from range(lo, hi + 1)


# --- syntax trees shared by the flavours -------------------------------------------------
# ("chars", Iv) one character of a set; ("seq", (nodes)); ("alt", (nodes));
# ("rep", node, min, max or None); ("assert", kind, word set or None).

EMPTY: tuple[Any, ...] = ("seq", ())
NEVER: tuple[Any, ...] = ("chars", ())
NEWLINE = 0x0A


def repeat(child: tuple[Any, ...], lo: int, hi: int | None) -> tuple[Any, ...]:
    """``child`` repeated; zero times, or the empty string any times, is the empty string.

    So ``(?:a{0}){30000}`` costs no state (it would otherwise blow the state bound and
    escape the model while matching what it would without it).
    """
    if hi == 0 or child == EMPTY:
        return EMPTY
    return ("rep", child, lo, hi)


def nullable(node: tuple[Any, ...]) -> bool:
    """Whether ``node`` matches the empty string whatever surrounds it (no assertion)."""
    kind = node[0]
    if kind == "seq":
        return all(nullable(child) for child in node[1])
    if kind == "alt":
        return any(nullable(child) for child in node[1])
    if kind == "rep":
        return node[2] == 0 or nullable(node[1])
    return False  # one character, or an assertion that may fail


class Reading:
    """How a pattern is being read: its no-ops noted, its groups, loosely or exactly.

    Exactly (the default), constructs outside the model raise :class:`Unsupported`.
    ``relaxed`` reads them loosely to draw strings from (lookarounds as if absent,
    atomic groups and possessive repeats as plain ones, a backreference as its group's
    pattern): a superset-like sketch of the language, never used to decide. What such a
    construct tests (a lookaround's body, an atomic group, a referenced group) goes to
    ``bodies``: where it holds is where the loose reading may be wrong, so strings are
    drawn there too (:func:`targeted`).
    """

    def __init__(
        self,
        noops: list[str] | None = None,
        relaxed: bool = False,
        bodies: list[tuple[Any, ...]] | None = None,
    ) -> None:
        self.noops = noops
        self.relaxed = relaxed
        self.bodies = bodies if bodies is not None else []
        self.groups: dict[int, tuple[Any, ...]] = {}

    def loosely(self, body: tuple[Any, ...]) -> tuple[Any, ...]:
        """``body``, read loosely, noted as a place where the reading may be wrong."""
        if body != EMPTY and body not in self.bodies:
            self.bodies.append(body)
        return body

    def lookaround(self, body: tuple[Any, ...], negative: bool, what: str) -> tuple[Any, ...]:
        """A lookaround the automaton can model: one whose body matches the empty string.

        Such a body matches wherever the lookaround is tried, so a positive one is always
        true (the empty string: it changes nothing, and is noted in ``noops``) and a
        negative one never is. Any other lookaround is outside the model.
        """
        if not nullable(body):
            if self.relaxed:
                self.loosely(body)
                return EMPTY
            raise Unsupported("lookarounds")
        if negative:
            return NEVER
        if self.noops is not None:
            self.noops.append(f"an always-true {what}")
        return EMPTY


class Unsupported(Exception):
    """A construct the automaton does not model; the message says which."""


class Syntax(Exception):
    """A pattern does not compile in its flavour."""

    def __init__(self, pattern: str, message: str, pos: int | None = None) -> None:
        super().__init__(pattern, message)
        self.pattern = pattern
        self.message = message
        self.pos = pos


# --- flavours read by CPython's parser: python, regex, RE2 -------------------------------


def _module(*names: str) -> Any:
    """The first of ``names`` that imports (CPython moved its regex internals in 3.11)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(names)


sre_c = _module("re._constants", "sre_constants")
sre_p = _module("re._parser", "sre_parse")

_I, _M, _S = sre_c.SRE_FLAG_IGNORECASE, sre_c.SRE_FLAG_MULTILINE, sre_c.SRE_FLAG_DOTALL
_A = sre_c.SRE_FLAG_ASCII
_CATEGORIES = {
    sre_c.CATEGORY_DIGIT: ("d", False),
    sre_c.CATEGORY_NOT_DIGIT: ("d", True),
    sre_c.CATEGORY_SPACE: ("s", False),
    sre_c.CATEGORY_NOT_SPACE: ("s", True),
    sre_c.CATEGORY_WORD: ("w", False),
    sre_c.CATEGORY_NOT_WORD: ("w", True),
}
_ASCII_WORD = iv_norm([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
_NL: Iv = ((NEWLINE, NEWLINE),)
_ALL_CACHE: dict[Iv, str] = {}


def _all_chars(universe: Iv) -> str:
    """Every character of ``universe``, in order, in one string."""
    found = _ALL_CACHE.get(universe)
    if found is None:
        found = _ALL_CACHE[universe] = "".join(
            chr(x) for lo, hi in universe for x in range(lo, hi + 1)
        )
    return found


def _code_point(universe: Iv, index: int) -> int:
    """The code point at ``index`` of :func:`_all_chars`."""
    for lo, hi in universe:
        if index <= hi - lo:
            return lo + index
        index -= hi - lo + 1
    raise IndexError(index)


_CASED: list[Iv] = []
_GROUPS: dict[int, int] = {}
_MAPPINGS = (str.lower, str.upper, str.casefold, str.title)

try:
    _SRE: Any = importlib.import_module("_sre")
except ImportError:  # pragma: no cover - another implementation of re
    _SRE = None


def _simple_lower(x: int) -> int:
    """The simple lowercase mapping CPython's re folds with (U+0130 -> "i")."""
    if _SRE is not None:
        return int(_SRE.unicode_tolower(x))
    lowered = chr(x).lower()
    return ord(lowered) if len(lowered) == 1 else x


def cased() -> Iv:
    """Characters that take part in some case relation (lower, upper, title, fold).

    Case-insensitive matching can only change whether such a character matches; every
    other character matches as it would case-sensitively. (All of them are below
    U+20000; the unit tests check the claim over the whole range.) Also groups them:
    characters related by single-character mappings, transitively, share a group.
    """
    if not _CASED:
        parent: dict[int, int] = {}

        def root(x: int) -> int:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        points = set()
        for x in range(0x20000):
            c = chr(x)
            # The full mappings of str, and the simple lowercase CPython's re folds with
            # (U+0130 lowercases to "i" there, to two characters in str.lower).
            for mapped in [m(c) for m in _MAPPINGS] + [chr(_simple_lower(x))]:
                if mapped != c:
                    points.add(x)
                    if len(mapped) == 1:
                        points.add(ord(mapped))
                        parent[root(x)] = root(ord(mapped))
        _GROUPS.update((x, root(x)) for x in points)
        _CASED.append(iv_of(points))
    return _CASED[0]


def _case_group(x: int) -> Iv:
    """The cased characters related to ``x`` by single-character case mappings."""
    cased()
    group = _GROUPS.get(x)
    if group is None:
        return ((x, x),)
    return iv_of(y for y, g in _GROUPS.items() if g == group)


class SreFlavour:
    """Python ``re``, ``regex`` (VERSION1) or RE2, read by CPython's regex parser."""

    def __init__(self, name: str) -> None:
        self.name = name
        full = ((0, 0x10FFFF),)
        # RE2 matches UTF-8: surrogates are not characters there.
        self.universe: Iv = iv_minus(full, ((0xD800, 0xDFFF),)) if name == "re2" else full
        self._sets: dict[tuple[str, int], Iv] = {}
        self._compiled: dict[str, Any] = {}

    # -- the engine
    def compile(self, pattern: str) -> Any:
        return compile_pattern(self.name, pattern)

    def engine(self, source: str) -> Any:
        found = self._compiled.get(source)
        if found is None:
            found = self._compiled[source] = self.compile(source)
        return found

    def accepts(self, patterns: list[str], mode: str, texts: list[str]) -> list[list[bool]]:
        """What the engine matches (Syntax for a pattern it does not compile)."""
        out = []
        for pattern in patterns:
            try:
                compiled = self.compile(pattern)
            except Exception as exc:
                raise Syntax(pattern, str(exc), getattr(exc, "pos", None)) from None
            method = getattr(compiled, mode)
            out.append([method(t) is not None for t in texts])
        return out

    def units(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def text(self, units: list[int]) -> str:
        return "".join(map(chr, units))

    # -- character sets, as the engine matches them
    def _escape(self, x: int) -> str:
        return f"\\x{{{x:x}}}" if self.name == "re2" else f"\\U{x:08x}"

    def _flags(self, flags: int, ignorecase: bool) -> str:
        letters = "i" if ignorecase else ""
        if flags & _A and self.name != "re2":
            letters += "a"
        return f"(?{letters})" if letters else ""

    def matched_by(self, flags: str, body: str) -> Iv:
        """The characters of the universe that ``flags + body`` (one character) matches.

        One search over a string of every character: the engine's own tables decide.
        """
        text = _all_chars(self.universe)
        runs = [
            (_code_point(self.universe, m.start()), _code_point(self.universe, m.end() - 1))
            for m in self.engine(f"{flags}(?:{body})+").finditer(text)
        ]
        return iv_and(iv_norm(runs), self.universe)

    def category(self, letter: str, flags: int) -> Iv:
        key = (letter, flags & _A)
        found = self._sets.get(key)
        if found is None:
            found = self._sets[key] = self.matched_by(self._flags(flags, False), f"[\\{letter}]")
        return found

    def word(self, flags: int) -> Iv:
        """The word characters of ``\\b``."""
        if self.name == "re2" or flags & _A:
            return _ASCII_WORD
        return self.category("w", flags)

    def item_set(self, item: tuple[Any, Any], flags: int) -> tuple[Iv, str]:
        """One item of a set: its characters (case-sensitively) and its source."""
        op, av = item
        if op is sre_c.LITERAL:
            return ((av, av),), self._escape(av)
        if op is sre_c.RANGE:
            return ((av[0], av[1]),), f"{self._escape(av[0])}-{self._escape(av[1])}"
        if op is sre_c.CATEGORY:
            letter, negated = _CATEGORIES[av]
            chars = self.category(letter, flags)
            return (iv_minus(self.universe, chars) if negated else chars), "\\" + (
                letter.upper() if negated else letter
            )
        raise Unsupported(f"a set item {op}")

    def chars(self, op: Any, av: Any, flags: int) -> Iv:
        """The characters one LITERAL, NOT_LITERAL or IN node matches under ``flags``."""
        if op is sre_c.LITERAL or op is sre_c.NOT_LITERAL:
            items, negated = [(sre_c.LITERAL, av)], op is sre_c.NOT_LITERAL
        else:
            negated = bool(av) and av[0][0] is sre_c.NEGATE
            items = av[1:] if negated else av
        plain: list[Iv] = []
        sources = []
        for item in items:
            chars, source = self.item_set(item, flags)
            plain.append(chars)
            sources.append(source)
        base = iv_union(*plain)
        if negated:
            base = iv_minus(self.universe, base)
        if not flags & _I:
            return base
        if self.name == "regex" and iv_and(base, _multi_fold()):
            raise Unsupported("full case folding of the regex module (VERSION1)")
        # Case-insensitively: ask the engine about every cased character.
        source = self._flags(flags, True) + "[" + ("^" if negated else "") + "".join(sources) + "]"
        engine = self.engine(source)
        fold = cased()
        if op is sre_c.LITERAL:
            fold = iv_and(fold, _case_group(av))
        matched = [x for x in iv_points(iv_and(fold, self.universe)) if engine.fullmatch(chr(x))]
        return iv_union(iv_minus(base, fold), iv_of(matched))

    # -- parsing
    def parse(
        self,
        pattern: str,
        noops: list[str] | None = None,
        relaxed: bool = False,
        bodies: list[tuple[Any, ...]] | None = None,
    ) -> tuple[Any, ...]:
        """The pattern's tree; constructs that change nothing are noted in ``noops``.

        ``relaxed`` reads constructs outside the model loosely (see :class:`Reading`): a
        tree only to draw strings from, never to decide with; what those constructs test
        goes to ``bodies``.
        """
        with warnings.catch_warnings():
            # A FutureWarning marks syntax CPython reads otherwise than other engines do
            # (nested sets, set operations): outside what this model can vouch for.
            warnings.simplefilter("error" if self.name != "python" else "ignore")
            try:
                tree = sre_p.parse(pattern)
            except (FutureWarning, DeprecationWarning) as err:
                raise Unsupported(f"syntax other engines read differently: {err}") from None
            except Exception as err:
                raise Unsupported(f"syntax CPython's parser does not read: {err}") from None
        return self._node(tree, tree.state.flags, Reading(noops, relaxed, bodies))

    def _node(self, sub: Any, flags: int, how: Reading) -> tuple[Any, ...]:
        out: list[tuple[Any, ...]] = []
        for op, av in sub:
            node = self._item(op, av, flags, how)
            if node != EMPTY:
                out.append(node)
        return ("seq", tuple(out))

    def _item(self, op: Any, av: Any, flags: int, how: Reading) -> tuple[Any, ...]:
        if op in (sre_c.LITERAL, sre_c.NOT_LITERAL, sre_c.IN):
            return ("chars", self.chars(op, av, flags))
        if op is sre_c.ANY:
            return ("chars", self.universe if flags & _S else iv_minus(self.universe, _NL))
        if op is sre_c.BRANCH:
            return ("alt", tuple(self._node(p, flags, how) for p in av[1]))
        if op is sre_c.SUBPATTERN:
            group, add, remove, p = av
            node = self._node(p, (flags | add) & ~remove, how)
            if group is not None:
                how.groups[group] = node
            return node
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT):
            lo, hi, p = av
            return repeat(self._node(p, flags, how), lo, None if hi == sre_c.MAXREPEAT else hi)
        if op is sre_c.AT:
            return self._anchor(av, flags)
        if op is sre_c.ASSERT or op is sre_c.ASSERT_NOT:
            direction, p = av
            what = "lookahead" if direction >= 0 else "lookbehind"
            body = self._node(p, flags, how)
            return how.lookaround(body, op is sre_c.ASSERT_NOT, what)
        if not how.relaxed:
            if op is sre_c.GROUPREF or op is sre_c.GROUPREF_EXISTS:
                raise Unsupported("backreferences are not regular")
            # POSSESSIVE_REPEAT, ATOMIC_GROUP, and anything newer
            raise Unsupported(f"{str(op).lower()}")
        if op is sre_c.GROUPREF:
            return how.loosely(how.groups.get(av, EMPTY))
        if op is sre_c.GROUPREF_EXISTS:
            _, yes, no = av
            return ("alt", (self._node(yes, flags, how), self._node(no or [], flags, how)))
        if op is getattr(sre_c, "ATOMIC_GROUP", None):
            return how.loosely(self._node(av, flags, how))
        if op is getattr(sre_c, "POSSESSIVE_REPEAT", None):
            lo, hi, p = av
            body = how.loosely(self._node(p, flags, how))
            return repeat(body, lo, None if hi == sre_c.MAXREPEAT else hi)
        raise Unsupported(f"{str(op).lower()}")

    def _anchor(self, at: Any, flags: int) -> tuple[Any, ...]:
        multiline = bool(flags & _M)
        if at is sre_c.AT_BEGINNING:
            return ("assert", "line_start" if multiline else "start", None)
        if at is sre_c.AT_BEGINNING_STRING:
            return ("assert", "start", None)
        if at is sre_c.AT_END:
            if multiline:
                return ("assert", "line_end", None)
            # Python and regex: the end, or before a newline that ends the string.
            return ("assert", "end" if self.name == "re2" else "end_or_final_newline", None)
        if at is sre_c.AT_END_STRING:
            return ("assert", "end", None)
        if at is sre_c.AT_BOUNDARY:
            return ("assert", "boundary", self.word(flags))
        if at is sre_c.AT_NON_BOUNDARY:
            # CPython's re (before 3.14): \B never matches in an empty string.
            quirk = self.name == "python" and sys.version_info < (3, 14)
            kind = "non_boundary_not_empty" if quirk else "non_boundary"
            return ("assert", kind, self.word(flags))
        raise Unsupported(f"the anchor {at}")


_MULTI: list[Iv] = []


def _multi_fold() -> Iv:
    """Characters a full case folding maps to several, and the characters it maps to."""
    if not _MULTI:
        points = set()
        for x in range(0x20000):
            folded = chr(x).casefold()
            if len(folded) > 1:
                points.add(x)
                points.update(ord(c) for c in folded)
                points.update(ord(c) for c in folded.upper())
        _MULTI.append(iv_of(points))
    return _MULTI[0]


# --- JavaScript, read by a parser of ECMAScript's grammar --------------------------------

_JS_LINE = iv_of([0x0A, 0x0D, 0x2028, 0x2029])
# ECMAScript's WhiteSpace and LineTerminator (the Zs characters listed).
_JS_SPACE = iv_norm(
    [
        (0x09, 0x0D),
        (0x20, 0x20),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
        (0xFEFF, 0xFEFF),
    ]
)
_JS_DIGIT = ((0x30, 0x39),)
_JS_ESCAPES = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_HEX = "0123456789abcdefABCDEF"


class JsFlavour:
    """JavaScript without flags, as V8 runs it: UTF-16 code units, Annex B syntax."""

    name = "javascript"
    universe: Iv = ((0, 0xFFFF),)

    def __init__(self, node: str, program_dir: str) -> None:
        self.node = node
        self.program_dir = program_dir

    def accepts(self, patterns: list[str], mode: str, texts: list[str]) -> list[list[bool]]:
        """What V8 matches (one run of node for every pattern and text)."""
        request = json.dumps({"patterns": patterns, "mode": mode, "texts": texts})
        script = os.path.join(self.program_dir, "regex.js")
        done = subprocess.run(
            [self.node, script, self.program_dir, "probe"],
            input=request.encode("utf-8", errors="surrogatepass"),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise Unsupported(f"node could not check the automaton: {done.stderr[-300:]!r}")
        answers = json.loads(done.stdout)
        out = []
        for pattern, answer in zip(patterns, answers, strict=True):
            if "error" in answer:
                raise Syntax(pattern, str(answer["error"]))
            out.append([bool(m) for m in answer["matched"]])
        return out

    def units(self, text: str) -> list[int]:
        data = text.encode("utf-16-le", errors="surrogatepass")
        return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]

    def text(self, units: list[int]) -> str:
        data = b"".join(u.to_bytes(2, "little") for u in units)
        return data.decode("utf-16-le", errors="surrogatepass")

    def parse(
        self,
        pattern: str,
        noops: list[str] | None = None,
        relaxed: bool = False,
        bodies: list[tuple[Any, ...]] | None = None,
    ) -> tuple[Any, ...]:
        """The pattern's tree (see :meth:`SreFlavour.parse`)."""
        return JsParser(self.units(pattern), Reading(noops, relaxed, bodies)).parse()


class JsParser:
    """ECMAScript's pattern grammar without flags (Annex B), over UTF-16 code units."""

    def __init__(self, units: list[int], how: Reading | None = None) -> None:
        self.s = units
        self.i = 0
        self.how = how or Reading()
        text = "".join(chr(u) for u in units)
        self.named = "(?<" in text.replace("(?<=", "").replace("(?<!", "")
        self.groups = self._count_groups()

    def _count_groups(self) -> int:
        count, i, in_class = 0, 0, False
        s = self.s
        while i < len(s):
            c = s[i]
            if c == 0x5C:
                i += 2
                continue
            if in_class:
                in_class = c != 0x5D
            elif c == 0x5B:
                in_class = True
            elif c == 0x28 and (
                i + 1 >= len(s)
                or s[i + 1] != 0x3F
                or (s[i + 2 : i + 3] == [0x3C] and s[i + 3 : i + 4] not in ([0x3D], [0x21]))
            ):
                count += 1
            i += 1
        return count

    def peek(self, k: int = 0) -> int | None:
        j = self.i + k
        return self.s[j] if j < len(self.s) else None

    def take(self) -> int:
        c = self.s[self.i]
        self.i += 1
        return c

    def fail(self, why: str) -> Unsupported:
        # V8 decides whether the pattern compiles; here it is only outside the model.
        return Unsupported(f"syntax this parser does not read: {why}")

    def parse(self) -> tuple[Any, ...]:
        node = self.disjunction()
        if self.i != len(self.s):
            raise self.fail("unmatched ')'")
        return node

    def disjunction(self) -> tuple[Any, ...]:
        alternatives = [self.alternative()]
        while self.peek() == 0x7C:
            self.take()
            alternatives.append(self.alternative())
        return alternatives[0] if len(alternatives) == 1 else ("alt", tuple(alternatives))

    def alternative(self) -> tuple[Any, ...]:
        terms = []
        while self.peek() is not None and self.peek() not in (0x7C, 0x29):
            term = self.term()
            if term != EMPTY:
                terms.append(term)
        return ("seq", tuple(terms))

    def term(self) -> tuple[Any, ...]:
        c = self.peek()
        if c == 0x5E:
            self.take()
            return self._no_quantifier(("assert", "start", None))
        if c == 0x24:
            self.take()
            return self._no_quantifier(("assert", "end", None))
        if c == 0x5C and self.peek(1) in (0x62, 0x42):
            self.i += 2
            kind = "boundary" if self.s[self.i - 1] == 0x62 else "non_boundary"
            return self._no_quantifier(("assert", kind, _ASCII_WORD))
        if (
            c == 0x28
            and self.peek(1) == 0x3F
            and (
                self.peek(2) in (0x3D, 0x21)
                or (self.peek(2) == 0x3C and self.peek(3) in (0x3D, 0x21))
            )
        ):
            behind = self.peek(2) == 0x3C
            negative = self.peek(3 if behind else 2) == 0x21
            self.i += 4 if behind else 3
            body = self.disjunction()
            if self.peek() != 0x29:
                raise self.fail("unterminated group")
            self.take()
            what = "lookbehind" if behind else "lookahead"
            node = self.how.lookaround(body, negative, what)
            # Annex B: a lookahead may take a quantifier, a lookbehind may not.
            return self._no_quantifier(node) if behind else self.quantified(node)
        atom = self.atom()
        return self.quantified(atom)

    def _no_quantifier(self, node: tuple[Any, ...]) -> tuple[Any, ...]:
        if self._quantifier_at() is not None:
            raise self.fail("nothing to repeat")
        return node

    def _quantifier_at(self) -> tuple[int, int | None, int] | None:
        """The quantifier starting here: (min, max, length), or None."""
        c = self.peek()
        if c == 0x2A:
            return 0, None, 1
        if c == 0x2B:
            return 1, None, 1
        if c == 0x3F:
            return 0, 1, 1
        if c != 0x7B:
            return None
        j = self.i + 1
        digits = ""
        while j < len(self.s) and 0x30 <= self.s[j] <= 0x39:
            digits += chr(self.s[j])
            j += 1
        if not digits:
            return None  # Annex B: a literal brace
        lo, hi = int(digits), int(digits)
        if j < len(self.s) and self.s[j] == 0x2C:
            j += 1
            more = ""
            while j < len(self.s) and 0x30 <= self.s[j] <= 0x39:
                more += chr(self.s[j])
                j += 1
            hi = int(more) if more else None  # type: ignore[assignment]
        if j >= len(self.s) or self.s[j] != 0x7D:
            return None
        return lo, hi, j + 1 - self.i

    def quantified(self, atom: tuple[Any, ...]) -> tuple[Any, ...]:
        found = self._quantifier_at()
        if found is None:
            return atom
        lo, hi, length = found
        if hi is not None and hi < lo:
            raise self.fail("numbers out of order in {} quantifier")
        self.i += length
        if self.peek() == 0x3F:
            self.take()  # lazy: the same strings match
        return repeat(atom, lo, hi)

    def atom(self) -> tuple[Any, ...]:
        c = self.take()
        if c == 0x2E:
            return ("chars", iv_minus(JsFlavour.universe, _JS_LINE))
        if c == 0x28:
            if self.peek() == 0x3F:
                if self.peek(1) == 0x3A:
                    self.i += 2
                elif self.peek(1) == 0x3C:
                    self.i += 2
                    while self.peek() not in (None, 0x3E):
                        self.take()
                    if self.peek() is None:
                        raise self.fail("invalid capture group name")
                    self.take()
                else:
                    raise self.fail("invalid group")
            inner = self.disjunction()
            if self.peek() != 0x29:
                raise self.fail("unterminated group")
            self.take()
            return inner
        if c == 0x5B:
            return self.char_class()
        if c == 0x5C:
            return self.escape()
        if c in (0x2A, 0x2B, 0x3F):
            raise self.fail("nothing to repeat")
        if c == 0x7B:
            self.i -= 1
            if self._quantifier_at() is not None:
                raise self.fail("nothing to repeat")
            self.i += 1
        if c == 0x29:
            raise self.fail("unmatched ')'")
        return ("chars", ((c, c),))

    def escape(self) -> tuple[Any, ...]:
        c = self.peek()
        if c is None:
            raise self.fail("\\ at end of pattern")
        sets = self._class_escape(c)
        if sets is not None:
            self.take()
            return ("chars", sets)
        if 0x31 <= c <= 0x39:
            if not self.how.relaxed:
                raise Unsupported("backreferences and legacy octal escapes")
            while self.peek() is not None and 0x30 <= self.peek() <= 0x39:  # type: ignore[operator]
                self.take()
            return EMPTY  # loosely: a backreference as if absent
        if c == 0x6B and self.named:
            raise Unsupported("backreferences")
        unit = self._character_escape(in_class=False)
        return ("chars", ((unit, unit),))

    def _class_escape(self, c: int) -> Iv | None:
        letter = chr(c)
        table = {"d": _JS_DIGIT, "s": _JS_SPACE, "w": _ASCII_WORD}
        if letter in table:
            return table[letter]
        if letter.lower() in table:
            return iv_minus(JsFlavour.universe, table[letter.lower()])
        return None

    def _character_escape(self, in_class: bool) -> int:
        """The code unit of the escape after a backslash (Annex B's identity escapes)."""
        c = self.take()
        letter = chr(c)
        if letter in _JS_ESCAPES:
            return _JS_ESCAPES[letter]
        if letter == "0":
            if self.peek() is not None and 0x30 <= self.peek() <= 0x39:  # type: ignore[operator]
                raise Unsupported("legacy octal escapes")
            return 0
        if letter == "c":
            nxt = self.peek()
            if nxt is not None and (chr(nxt).isascii() and chr(nxt).isalpha()):
                self.take()
                return nxt % 32
            if in_class and nxt is not None and (0x30 <= nxt <= 0x39 or nxt == 0x5F):
                self.take()
                return nxt % 32
            self.i -= 1  # Annex B: the backslash is itself, 'c' comes next
            return 0x5C
        if letter in "xu":
            width = 2 if letter == "x" else 4
            digits = self.s[self.i : self.i + width]
            if len(digits) == width and all(chr(d) in _HEX for d in digits):
                self.i += width
                return int("".join(map(chr, digits)), 16)
            return c
        if in_class and letter == "b":
            return 0x08
        return c

    def char_class(self) -> tuple[Any, ...]:
        negated = self.peek() == 0x5E
        if negated:
            self.take()
        members: list[Iv] = []
        while True:
            c = self.peek()
            if c is None:
                raise self.fail("unterminated character class")
            if c == 0x5D:
                self.take()
                break
            first = self._class_atom()
            if self.peek() == 0x2D and self.peek(1) not in (None, 0x5D):
                self.take()
                second = self._class_atom()
                if isinstance(first, int) and isinstance(second, int):
                    if first > second:
                        raise self.fail("range out of order in character class")
                    members.append(((first, second),))
                    continue
                # Annex B: a class escape at either end makes the dash a literal.
                members += [_as_set(first), ((0x2D, 0x2D),), _as_set(second)]
                continue
            members.append(_as_set(first))
        chars = iv_union(*members)
        return ("chars", iv_minus(JsFlavour.universe, chars) if negated else chars)

    def _class_atom(self) -> int | Iv:
        c = self.take()
        if c != 0x5C:
            return c
        nxt = self.peek()
        if nxt is None:
            raise self.fail("\\ at end of pattern")
        sets = self._class_escape(nxt)
        if sets is not None:
            self.take()
            return sets
        if 0x31 <= nxt <= 0x39:
            raise Unsupported("legacy octal escapes")
        if nxt == 0x2D:
            self.take()
            return 0x2D
        return self._character_escape(in_class=True)


def _as_set(atom: int | Iv) -> Iv:
    return ((atom, atom),) if isinstance(atom, int) else atom


# --- automata ----------------------------------------------------------------------------

START = -1  # the context before the first character
END = -1  # the context after the last one


class Nfa:
    """Thompson's construction, with zero-width assertions on edges of their own."""

    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.asserts: list[list[tuple[str, int, int]]] = []
        self.edges: list[list[tuple[Any, int]]] = []
        self.words: list[Iv] = []  # the word sets assertions refer to

    def new(self) -> int:
        if len(self.eps) >= MAX_NFA_STATES:
            raise Unsupported(f"the automaton needs more than {MAX_NFA_STATES} states")
        self.eps.append([])
        self.asserts.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, node: tuple[Any, ...], state: int) -> int:
        """Add ``node`` after ``state``; the state after it."""
        kind = node[0]
        if kind == "chars":
            end = self.new()
            if node[1]:
                self.edges[state].append((node[1], end))
            return end
        if kind == "seq":
            for child in node[1]:
                state = self.build(child, state)
            return state
        if kind == "alt":
            end = self.new()
            for child in node[1]:
                start = self.new()
                self.eps[state].append(start)
                self.eps[self.build(child, start)].append(end)
            return end
        if kind == "assert":
            end = self.new()
            word = -1
            if node[2] is not None:
                if node[2] not in self.words:
                    self.words.append(node[2])
                word = self.words.index(node[2])
            self.asserts[state].append((node[1], word, end))
            return end
        _, child, lo, hi = node
        for _ in range(lo):
            state = self.build(child, state)
        if hi is None:
            loop = self.new()
            self.eps[state].append(loop)
            self.eps[self.build(child, loop)].append(loop)
            return loop
        end = self.new()
        for _ in range(hi - lo):
            self.eps[state].append(end)
            state = self.build(child, state)
        self.eps[state].append(end)
        return end

    def char_sets(self) -> list[Iv]:
        return [iv for edges in self.edges for iv, _ in edges]


def wrapped(node: tuple[Any, ...], mode: str, universe: Iv) -> tuple[Any, ...]:
    """The pattern as a whole-string pattern: ``search`` and ``match`` allow more around it."""
    anything = ("rep", ("chars", universe), 0, None)
    if mode == "search":
        return ("seq", (anything, node, anything))
    if mode == "match":
        return ("seq", (node, anything))
    return node


class Alphabet:
    """Classes of characters no set of either pattern tells apart."""

    def __init__(self, sets: list[Iv], universe: Iv) -> None:
        cuts = {universe[0][0]}
        marked = list(dict.fromkeys([*sets, universe, ((NEWLINE, NEWLINE),)]))
        for s in marked:
            for lo, hi in s:
                cuts.add(lo)
                cuts.add(hi + 1)
        points = sorted(cuts)
        self.starts: list[int] = []
        self.ids: list[int] = []  # class of each segment (-1: outside the universe)
        by_signature: dict[tuple[bool, ...], int] = {}
        self.segments: list[list[tuple[int, int]]] = []
        for lo, nxt in itertools.pairwise(points):
            self.starts.append(lo)
            if not iv_has(universe, lo):
                self.ids.append(-1)
                continue
            signature = tuple(iv_has(s, lo) for s in marked)
            cls = by_signature.setdefault(signature, len(by_signature))
            if cls == len(self.segments):
                self.segments.append([])
            self.segments[cls].append((lo, nxt - 1))
            self.ids.append(cls)
        self.size = len(self.segments)
        self.newline = self.class_of(NEWLINE)
        self.rep = [_representative(segs) for segs in self.segments]
        self.alt = [_alternate(segs, r) for segs, r in zip(self.segments, self.rep, strict=True)]
        # Readable classes first: the shortest witness found then uses readable characters.
        self.order = sorted(range(self.size), key=lambda c: chr(self.rep[c]) not in _PRINTABLE)

    def class_of(self, x: int) -> int:
        n = bisect.bisect_right(self.starts, x) - 1
        return self.ids[n] if 0 <= n < len(self.ids) else -1

    def mask(self, chars: Iv) -> int:
        out = 0
        for cls, segs in enumerate(self.segments):
            if iv_has(chars, segs[0][0]):
                out |= 1 << cls
        return out


def _representative(segments: list[tuple[int, int]]) -> int:
    for c in _PRINTABLE:
        if any(lo <= ord(c) <= hi for lo, hi in segments):
            return ord(c)
    for lo, hi in segments:
        for x in range(lo, min(hi, lo + 64) + 1):
            if not 0xD800 <= x <= 0xDFFF and chr(x).isprintable():
                return x
    for lo, hi in segments:
        for x in range(lo, min(hi, lo + 64) + 1):
            if not 0xD800 <= x <= 0xDFFF:
                return x
    return segments[0][0]


def _alternate(segments: list[tuple[int, int]], rep: int) -> int:
    """Another member of the class (its last one), to probe the class with."""
    last = segments[-1][1]
    return last if last != rep else segments[0][0]


class Dfa:
    """The subset construction, made lazily, of one pattern's NFA over an alphabet.

    A state is the NFA states reached (each with an obligation bit: "the string must
    end after the next character", which Python's ``$`` before a final newline
    leaves) and what the assertions need to know of the character before.
    """

    def __init__(self, nfa: Nfa, start: int, final: int, alphabet: Alphabet) -> None:
        self.nfa = nfa
        self.final = final
        self.alphabet = alphabet
        self.masks = [[(alphabet.mask(iv), tgt) for iv, tgt in edges] for edges in nfa.edges]
        self.word_masks = [alphabet.mask(w) for w in nfa.words]
        # What a character tells the assertions after it: newline, and each word set.
        self.context = [
            (cls == alphabet.newline)
            | sum(((m >> cls) & 1) << (k + 1) for k, m in enumerate(self.word_masks))
            for cls in range(alphabet.size)
        ]
        self.keys: dict[tuple[frozenset[int], int], int] = {}
        self.states: list[tuple[frozenset[int], int]] = []
        self.moves: dict[tuple[int, int], int] = {}
        self.finals: dict[int, bool] = {}
        self.start = self.intern(frozenset({start * 2}), START)

    def intern(self, threads: frozenset[int], prev: int) -> int:
        key = (threads, prev if threads else START)
        found = self.keys.get(key)
        if found is None:
            if len(self.states) >= MAX_DFA_STATES:
                raise Unsupported(f"the automaton grew past {MAX_DFA_STATES} states")
            found = self.keys[key] = len(self.states)
            self.states.append(key)
        return found

    def dead(self, state: int) -> bool:
        return not self.states[state][0]

    def _passes(self, kind: str, word: int, prev: int, nxt: int) -> int | None:
        """0 if the assertion holds between ``prev`` and ``nxt``, 1 if it holds when the
        string ends after ``nxt``, None if it fails."""
        if kind == "start":
            return 0 if prev == START else None
        if kind == "line_start":
            return 0 if prev == START or prev & 1 else None
        newline = nxt != END and nxt == self.alphabet.newline
        if kind == "end":
            return 0 if nxt == END else None
        if kind == "end_or_final_newline":
            return 0 if nxt == END else (1 if newline else None)
        if kind == "line_end":
            return 0 if nxt == END or newline else None
        if kind == "non_boundary_not_empty" and prev == START and nxt == END:
            return None
        before = prev != START and bool(prev >> (word + 1) & 1)
        after = nxt != END and bool(self.word_masks[word] >> nxt & 1)
        holds = before != after
        return 0 if holds == (kind == "boundary") else None  # non_boundary: the opposite

    def _closure(self, threads: Iterable[int], prev: int, nxt: int) -> set[int]:
        seen = set(threads)
        stack = list(seen)
        nfa = self.nfa
        while stack:
            thread = stack.pop()
            state, bit = thread >> 1, thread & 1
            for target in nfa.eps[state]:
                t = target * 2 + bit
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
            for kind, word, target in nfa.asserts[state]:
                extra = self._passes(kind, word, prev, nxt)
                if extra is not None:
                    t = target * 2 + (bit | extra)
                    if t not in seen:
                        seen.add(t)
                        stack.append(t)
        return seen

    def step(self, state: int, cls: int) -> int:
        found = self.moves.get((state, cls))
        if found is not None:
            return found
        threads, prev = self.states[state]
        # A thread that had to end here dies on a character.
        live = [t for t in threads if not t & 1]
        reached = set()
        for thread in self._closure(live, prev, cls):
            for mask, target in self.masks[thread >> 1]:
                if mask >> cls & 1:
                    reached.add(target * 2 + (thread & 1))
        found = self.moves[(state, cls)] = self.intern(frozenset(reached), self.context[cls])
        return found

    def accepting(self, state: int) -> bool:
        found = self.finals.get(state)
        if found is None:
            threads, prev = self.states[state]
            closed = self._closure({t & ~1 for t in threads}, prev, END)
            found = self.finals[state] = any(t >> 1 == self.final for t in closed)
        return found

    def accepts(self, units: list[int]) -> bool:
        state = self.start
        for unit in units:
            cls = self.alphabet.class_of(unit)
            if cls < 0:
                return False  # not a character of this flavour
            state = self.step(state, cls)
        return self.accepting(state)


def automata(
    flavour: Any, candidate: str, gold: str, mode: str, noops: list[str] | None = None
) -> tuple[Dfa, Dfa, Alphabet]:
    """Both patterns' automata over one alphabet (the candidate's no-ops noted in ``noops``)."""
    nfas = []
    for pattern, notes in ((candidate, noops), (gold, None)):
        tree = wrapped(flavour.parse(pattern, notes), mode, flavour.universe)
        nfa = Nfa()
        start = nfa.new()
        nfas.append((nfa, start, nfa.build(tree, start)))
    sets = [iv for nfa, _, _ in nfas for iv in nfa.char_sets() + nfa.words]
    alphabet = Alphabet(sets, flavour.universe)
    dfas = [Dfa(nfa, start, final, alphabet) for nfa, start, final in nfas]
    return dfas[0], dfas[1], alphabet


def explore(
    mine: Dfa, theirs: Dfa, alphabet: Alphabet, deadline: float
) -> tuple[list[int] | None, list[list[int]]]:
    """Breadth-first over pairs of states: a shortest string the two disagree on (or
    None), and the shortest string reaching each pair visited (the probes)."""
    parent: dict[tuple[int, int], tuple[tuple[int, int], int] | None] = {}
    first = (mine.start, theirs.start)
    parent[first] = None
    queue = collections.deque([first])
    reached: list[tuple[int, int]] = []

    def spell(pair: tuple[int, int]) -> list[int]:
        units = []
        while (link := parent[pair]) is not None:
            pair, cls = link
            units.append(alphabet.rep[cls])
        return units[::-1]

    while queue:
        pair = queue.popleft()
        reached.append(pair)
        if mine.accepting(pair[0]) != theirs.accepting(pair[1]):
            return spell(pair), [spell(p) for p in reached[:MAX_PROBES]]
        if time.monotonic() > deadline:
            raise Unsupported("the automata took too long to compare")
        for cls in alphabet.order:
            nxt = (mine.step(pair[0], cls), theirs.step(pair[1], cls))
            if nxt in parent or (mine.dead(nxt[0]) and theirs.dead(nxt[1])):
                continue
            if len(parent) >= MAX_PAIRS:
                raise Unsupported(f"more than {MAX_PAIRS} pairs of states to compare")
            parent[nxt] = (pair, cls)
            queue.append(nxt)
    return None, [spell(p) for p in reached[:MAX_PROBES]]


def probes(
    found: list[list[int]], alphabet: Alphabet, examples: list[list[int]]
) -> list[list[int]]:
    """Strings to check the automata against the engines with."""
    alternate = {alphabet.rep[c]: alphabet.alt[c] for c in range(alphabet.size)}
    out = [list(s) for s in found]
    out += [[alternate.get(u, u) for u in s] for s in found[:300]]
    newline = [NEWLINE]
    out += [s + newline for s in found[:200]] + [newline + s for s in found[:100]]
    generator = random.Random(len(found))
    symbols = sorted({*alphabet.rep, *alphabet.alt, NEWLINE})
    for _ in range(200):
        out.append([generator.choice(symbols) for _ in range(generator.randint(0, 8))])
    out += examples
    unique = {tuple(s): None for s in out}
    return [list(s) for s in unique][: 2 * MAX_PROBES]


def check_against_engine(
    flavour: Any,
    patterns: tuple[str, str],
    dfas: tuple[Dfa, Dfa],
    mode: str,
    strings: list[list[int]],
) -> None:
    """Raise Unsupported where an automaton and its engine disagree on a string."""
    texts = [flavour.text(s) for s in strings]
    verdicts = flavour.accepts(list(patterns), mode, texts)
    for who, dfa, engine in zip(("candidate", "gold"), dfas, verdicts, strict=True):
        for units, text, real in zip(strings, texts, engine, strict=True):
            if dfa.accepts(units) != real:
                raise Unsupported(
                    f"the automaton of the {who} pattern disagrees with the {flavour.name} "
                    f"engine on {text!r} (a construct it does not model)"
                )


def flavour_of(spec: dict[str, Any], program_dir: str, node: str) -> Any:
    if spec["flavor"] == "javascript":
        return JsFlavour(node, program_dir)
    return SreFlavour(spec["flavor"])


def equivalence(
    candidate: str, gold: str, spec: dict[str, Any], flavour: Any, deadline: float
) -> dict[str, Any]:
    """Decide equivalence with automata; when they cannot, compare on generated strings.

    The record says ``equivalent`` (with a ``witness`` when not), and when the automata
    did not decide: why (``undecidable``), how many example strings (``checked``) and
    generated strings (``generated``) were compared, and on what a pass rests
    (``basis``). ``noops`` lists constructs of the candidate that change nothing.
    """
    mode = spec["mode"]
    examples = [case["text"] for case in spec["cases"]]
    noops: list[str] = []
    try:
        mine, theirs, alphabet = automata(flavour, candidate, gold, mode, noops)
        witness, found = explore(mine, theirs, alphabet, deadline)
        strings = probes(found, alphabet, [flavour.units(t) for t in examples])
        check_against_engine(flavour, (candidate, gold), (mine, theirs), mode, strings)
    except Unsupported as why:
        record = undecided(candidate, gold, spec, flavour, str(why)[:300])
    except (RecursionError, MemoryError) as err:
        record = undecided(candidate, gold, spec, flavour, type(err).__name__)
    else:
        record = {"event": "equivalence", "equivalent": witness is None}
        if witness is not None:
            record["witness"] = flavour.text(witness)
            record["gold_accepts"] = theirs.accepts(witness)
    if noops:
        record["noops"] = sorted(set(noops))
    return record


# --- when the automata do not decide: strings drawn from them ----------------------------

#: Most (state, class) steps taken to explore one pattern's automaton for sampling.
MAX_SAMPLE_STEPS = 200_000
#: Strings drawn from one pattern's automaton: transitions covered, members, near-misses
#: of each member, and strings of mostly the complement.
MAX_COVER = 1_500
MEMBERS = 500
NEAR_MISSES = 3
OTHERS = 300
#: Longest random walk (characters) before it heads for an accepting state.
MAX_WALK = 40
#: Most constructs of a candidate read loosely that strings are drawn for (:func:`targeted`).
MAX_BODIES = 8


class Explored:
    """Every state of one automaton reachable from its start (breadth first), with the
    shortest way to each, and for each state that can reach acceptance the shortest
    way on to it."""

    def __init__(self, dfa: Dfa) -> None:
        self.dfa = dfa
        self.parent: dict[int, tuple[int, int] | None] = {dfa.start: None}
        self.edges: dict[int, list[tuple[int, int]]] = {}
        self.states = [dfa.start]
        steps = 0
        for state in self.states:  # grows while it is read: breadth first
            out: list[tuple[int, int]] = []
            self.edges[state] = out
            if dfa.dead(state):
                continue
            for cls in dfa.alphabet.order:
                steps += 1
                if steps > MAX_SAMPLE_STEPS:
                    raise Unsupported("the automaton is too large to sample")
                target = dfa.step(state, cls)
                out.append((cls, target))
                if target not in self.parent:
                    self.parent[target] = (state, cls)
                    self.states.append(target)
        back: dict[int, list[tuple[int, int]]] = collections.defaultdict(list)
        for state, out in self.edges.items():
            for cls, target in out:
                back[target].append((state, cls))
        self.onward: dict[int, tuple[int, int] | None] = {
            s: None for s in self.states if dfa.accepting(s)
        }
        queue = collections.deque(self.onward)
        while queue:
            target = queue.popleft()
            for state, cls in back[target]:
                if state not in self.onward:
                    self.onward[state] = (cls, target)
                    queue.append(state)

    def live(self, state: int) -> bool:
        """Whether an accepting state can be reached from ``state``."""
        return state in self.onward

    def way_to(self, state: int) -> list[int]:
        """The classes of a shortest string reaching ``state``."""
        out = []
        while (link := self.parent[state]) is not None:
            state, cls = link
            out.append(cls)
        return out[::-1]

    def way_on(self, state: int) -> list[int]:
        """The classes of a shortest string from ``state`` (live) to acceptance."""
        out = []
        while (link := self.onward[state]) is not None:
            cls, state = link
            out.append(cls)
        return out


class Spelling:
    """Characters for classes: mostly each class's readable representative, sometimes
    its other probe character or any member of it."""

    def __init__(self, alphabet: Alphabet, rng: random.Random) -> None:
        self.alphabet = alphabet
        self.rng = rng
        self.pool = sorted({*alphabet.rep, *alphabet.alt, NEWLINE})

    def char(self, cls: int) -> int:
        roll = self.rng.random()
        if roll < 0.6:
            return self.alphabet.rep[cls]
        if roll < 0.75:
            return self.alphabet.alt[cls]
        lo, hi = self.rng.choice(self.alphabet.segments[cls])
        x = self.rng.randint(lo, hi)
        return self.alphabet.rep[cls] if 0xD800 <= x <= 0xDFFF else x

    def text(self, classes: list[int]) -> list[int]:
        return [self.char(c) for c in classes]

    def near(self, units: list[int]) -> list[int]:
        """``units`` changed in one place: a character inserted, replaced, dropped,
        doubled, or two swapped."""
        rng = self.rng
        out = list(units)
        other = (
            rng.choice(self.pool)
            if rng.random() < 0.7
            else self.char(rng.randrange(self.alphabet.size))
        )
        at = rng.randrange(len(out)) if out else 0
        how = rng.randrange(5) if out else 0
        if how == 0:
            out.insert(rng.randrange(len(out) + 1), other)
        elif how == 1:
            out[at] = other
        elif how == 2:
            del out[at]
        elif how == 3:
            out.insert(at, out[at])
        elif len(out) > 1:
            at = min(at, len(out) - 2)
            out[at], out[at + 1] = out[at + 1], out[at]
        return out


class Drawn:
    """Strings (code units) drawn from one pattern's automaton, and the automaton.

    ``probes`` are short and systematic (every transition, random short strings): an
    automaton is checked against its engine on them. ``more`` are random members and
    their near-misses, longer, judged by the automaton once it passed that check.
    """

    def __init__(self, dfa: Dfa, probes: list[list[int]], more: list[list[int]]) -> None:
        self.dfa = dfa
        self.probes = probes
        self.more = more


def sample(
    flavour: Any,
    pattern: str,
    mode: str,
    rng: random.Random,
    relaxed: bool = False,
    bodies: list[tuple[Any, ...]] | None = None,
) -> Drawn:
    """Strings drawn from the automaton of ``pattern`` alone (see :func:`draw`).

    Raises Unsupported when the pattern is outside the model (read ``relaxed``: see
    :class:`Reading`, which notes in ``bodies`` what its loose constructs test) or its
    automaton too large.
    """
    tree = wrapped(flavour.parse(pattern, relaxed=relaxed, bodies=bodies), mode, flavour.universe)
    nfa = Nfa()
    start = nfa.new()
    final = nfa.build(tree, start)
    alphabet = Alphabet(nfa.char_sets() + nfa.words, flavour.universe)
    return draw(Dfa(nfa, start, final, alphabet), rng)


def draw(dfa: Any, rng: random.Random) -> Drawn:
    """Strings drawn from an automaton (a :class:`Dfa` or a :class:`Product`).

    Every transition of the automaton, continued to an accepting state where one is
    reachable (both sides of every boundary the pattern draws); random strings, mostly
    of the complement; random members, most short and some as long as a walk goes (a
    pattern may treat long strings otherwise); near-misses of each member (one character
    inserted, replaced, dropped, doubled, swapped).
    """
    alphabet = dfa.alphabet
    seen = Explored(dfa)
    spell = Spelling(alphabet, rng)
    probes: list[list[int]] = []
    steps = [(s, cls, t) for s in seen.states for cls, t in seen.edges[s]]
    if len(steps) > MAX_COVER:
        steps = rng.sample(steps, MAX_COVER)
    for state, cls, target in steps:
        classes = [*seen.way_to(state), cls]
        if seen.live(target):
            classes += seen.way_on(target)
        probes.append(spell.text(classes))
    for _ in range(OTHERS):
        length = rng.randint(0, 12)
        probes.append(spell.text([rng.randrange(alphabet.size) for _ in range(length)]))
    members = []
    for n in range(MEMBERS if seen.live(dfa.start) else 0):
        # One walk in eight goes long; one in eight also repeats itself (a period of 1 to
        # 4 classes, spelled alike each time): what a backreference tests.
        period = (n // 8) % 4 + 1 if n % 8 == 4 else 0
        stop = 0.01 if n % 8 in (0, 4) else 0.3
        state, classes = dfa.start, []
        while len(classes) < MAX_WALK and not (dfa.accepting(state) and rng.random() < stop):
            choices = [(c, t) for c, t in seen.edges[state] if seen.live(t)]
            if not choices:
                break
            wanted = classes[-period] if period and len(classes) >= period else -1
            again = [(c, t) for c, t in choices if c == wanted]
            cls, state = again[0] if again else rng.choice(choices)
            classes.append(cls)
        classes += seen.way_on(state)
        members.append([alphabet.rep[c] for c in classes] if period else spell.text(classes))
    near = [spell.near(units) for units in members for _ in range(NEAR_MISSES)]
    return Drawn(dfa, probes, members + near)


class Product:
    """Strings both of two automata over one alphabet accept, or that the first accepts
    and the second does not (``without``): the states are pairs, made lazily."""

    def __init__(self, first: Dfa, second: Dfa, without: bool) -> None:
        self.first, self.second, self.without = first, second, without
        self.alphabet = first.alphabet
        self.keys: dict[tuple[int, int], int] = {}
        self.pairs: list[tuple[int, int]] = []
        self.moves: dict[tuple[int, int], int] = {}
        self.start = self.intern((first.start, second.start))

    def intern(self, pair: tuple[int, int]) -> int:
        found = self.keys.get(pair)
        if found is None:
            if len(self.pairs) >= MAX_PAIRS:
                raise Unsupported(f"more than {MAX_PAIRS} pairs of states to sample")
            found = self.keys[pair] = len(self.pairs)
            self.pairs.append(pair)
        return found

    def dead(self, state: int) -> bool:
        a, b = self.pairs[state]
        return self.first.dead(a) or (not self.without and self.second.dead(b))

    def step(self, state: int, cls: int) -> int:
        found = self.moves.get((state, cls))
        if found is None:
            a, b = self.pairs[state]
            pair = (self.first.step(a, cls), self.second.step(b, cls))
            found = self.moves[(state, cls)] = self.intern(pair)
        return found

    def accepting(self, state: int) -> bool:
        a, b = self.pairs[state]
        return self.first.accepting(a) and self.second.accepting(b) != self.without


def targeted(
    flavour: Any, gold: str, mode: str, bodies: list[tuple[Any, ...]], seed: int
) -> list[list[int]]:
    """Members of the gold's language drawn where the candidate's loose reading may be
    wrong: for each construct it read loosely (a lookaround's body, an atomic group, a
    referenced group; see :class:`Reading`), members in which that body matches (anywhere,
    from the start, up to the end) and members in which it does not.

    A lookaround that carves rare strings out of the gold's language (``(?!a{40})``,
    ``(?!.*cab.*bca)``) is invisible to random members of the gold and to the loose
    reading (which drops it); these strings are where it acts. Raises Unsupported for
    more than :data:`MAX_BODIES` bodies, or one whose automata are too large: a pass cannot
    rest on a sample that missed where the candidate may differ.
    """
    if len(bodies) > MAX_BODIES:
        raise Unsupported(f"more than {MAX_BODIES} lookarounds, atomic groups or references")
    anything = ("rep", ("chars", flavour.universe), 0, None)
    gold_tree = wrapped(flavour.parse(gold), mode, flavour.universe)
    out: list[list[int]] = []
    for n, body in enumerate(bodies):
        nfas = []
        # The body anywhere; at the start (a lookahead's place when it leads the pattern);
        # at the end (a lookbehind's when it closes it).
        places: list[tuple[Any, ...]] = [
            ("seq", (anything, body, anything)),
            ("seq", (body, anything)),
            ("seq", (anything, body)),
        ]
        for tree in (gold_tree, *places):
            nfa = Nfa()
            start = nfa.new()
            nfas.append((nfa, start, nfa.build(tree, start)))
        sets = [iv for nfa, _, _ in nfas for iv in nfa.char_sets() + nfa.words]
        alphabet = Alphabet(sets, flavour.universe)
        (g_nfa, g_start, g_final), *wheres = nfas
        for k, (b_nfa, b_start, b_final) in enumerate(wheres):
            for without in (False, True):
                product = Product(
                    Dfa(g_nfa, g_start, g_final, alphabet),
                    Dfa(b_nfa, b_start, b_final, alphabet),
                    without,
                )
                found = draw(product, random.Random(seed + 6 * n + 2 * k + without))
                out += found.probes + found.more
    return out


def undecided(
    candidate: str, gold: str, spec: dict[str, Any], flavour: Any, reason: str
) -> dict[str, Any]:
    """Equivalence the automata did not decide: the patterns compared on many strings.

    The strings: the examples, strings drawn from the gold pattern's automaton, and
    strings drawn from a loose reading of the candidate (its lookarounds as if absent,
    and so on: where it may accept what the gold does not). The candidate's engine judges
    every string. The gold's automaton judges them when it agrees with the gold's engine
    on its probes and the examples (it is the gold's language then, as in a decided
    verdict, and the gold's engine never meets a long string that could make it
    backtrack); otherwise the gold's engine does. The shortest string they disagree on
    is a witness. Agreement is a pass when the gold's automaton judged (``basis``
    "generated": the sample covers the gold's language); otherwise, as before any
    sampling, only when there were example strings (``basis`` "examples"). Never a
    proof. The sample is seeded by the gold pattern, so verdicts do not vary by run.
    """
    mode = spec["mode"]
    examples = {tuple(flavour.units(case["text"])) for case in spec["cases"]}
    record: dict[str, Any] = {"event": "equivalence", "undecidable": reason}
    seed = zlib.crc32(json.dumps([spec["flavor"], mode, gold]).encode())
    drawn: set[tuple[int, ...]] = set()
    gold_drawn: Drawn | None = None
    bodies: list[tuple[Any, ...]] = []  # what the candidate's loose constructs test
    readings = (("gold", gold, False), ("gold", gold, True), ("candidate", candidate, True))
    for offset, (who, pattern, relaxed) in enumerate(readings):
        exact_gold = who == "gold" and not relaxed
        if who == "gold" and relaxed and gold_drawn is not None:
            continue  # the gold is read loosely only when it cannot be read exactly
        notes = bodies if who == "candidate" else None
        try:
            found = sample(flavour, pattern, mode, random.Random(seed + offset), relaxed, notes)
        except (Unsupported, RecursionError, MemoryError) as err:
            if exact_gold:
                record["gold_model"] = str(err)[:300] or type(err).__name__
            continue
        if exact_gold:
            gold_drawn = found
        drawn.update(map(tuple, found.probes + found.more))
    # A construct of the candidate the sample could not reach cannot rest a pass on it.
    untargeted = ""
    if gold_drawn is not None and bodies:
        try:
            drawn.update(map(tuple, targeted(flavour, gold, mode, bodies, seed + len(readings))))
        except (Unsupported, RecursionError, MemoryError) as err:
            untargeted = str(err)[:300] or type(err).__name__
    record["checked"] = len(examples)
    record["generated"] = len(drawn - examples)
    strings = sorted(examples | drawn, key=lambda u: (len(u), u))
    if not strings:
        record["equivalent"] = False
        return record
    texts = [flavour.text(list(u)) for u in strings]
    [mine] = flavour.accepts([candidate], mode, texts)
    theirs = _by_automaton(flavour, gold, mode, gold_drawn, examples, strings)
    covered = theirs is not None
    if theirs is None:
        if gold_drawn is not None:
            record["gold_model"] = "the gold pattern's automaton disagrees with its engine"
        [theirs] = flavour.accepts([gold], mode, texts)
    for text, a, b in zip(texts, mine, theirs, strict=True):
        if a != b:
            record.update(equivalent=False, witness=text, gold_accepts=b)
            return record
    if untargeted and covered:
        record.update(equivalent=False, unsampled=untargeted)
        return record
    record["basis"] = "generated" if covered else "examples"
    record["equivalent"] = covered or bool(examples)
    return record


def _by_automaton(
    flavour: Any,
    gold: str,
    mode: str,
    drawn: Drawn | None,
    examples: set[tuple[int, ...]],
    strings: list[tuple[int, ...]],
) -> list[bool] | None:
    """The gold automaton's verdicts on ``strings``, if it agrees with the gold's engine
    on its probes and the examples; else None."""
    if drawn is None:
        return None
    checks = sorted(examples | set(map(tuple, drawn.probes)))
    [real] = flavour.accepts([gold], mode, [flavour.text(list(u)) for u in checks])
    try:
        if any(drawn.dfa.accepts(list(u)) != r for u, r in zip(checks, real, strict=True)):
            return None
        return [drawn.dfa.accepts(list(u)) for u in strings]
    except (Unsupported, RecursionError, MemoryError):
        return None


def syntax_error(exc: BaseException) -> dict[str, Any]:
    message = exc.message if isinstance(exc, Syntax) else str(exc)
    return {
        "event": "syntax_error",
        "message": message[:1000],
        "position": getattr(exc, "pos", None),
    }


def main(argv: list[str]) -> int:
    started = time.monotonic()
    program_dir, index = argv[0], int(argv[1])
    node = argv[2] if len(argv) > 2 and argv[2] else "node"
    spec = json.loads(program_file(program_dir, "spec.json"))
    pattern = program_file(program_dir, "pattern.txt").decode("utf-8", "surrogateescape")
    cases = spec["cases"]
    if index < len(cases):
        try:
            compiled = compile_pattern(spec["flavor"], pattern)
        except Exception as exc:
            emit(syntax_error(exc))
            return 1
        record = run_case(compiled, spec["mode"], cases[index])
    else:
        flavour = flavour_of(spec, program_dir, node)
        gold = spec["gold"]
        # Most of the test's time for the automata; the rest for the examples.
        deadline = started + 0.6 * spec.get("timeout_ms", 5000) / 1000
        try:
            # Both must compile in the flavour's own engine (the candidate is checked first).
            flavour.accepts([pattern, gold], spec["mode"], [])
            if pattern == gold:
                # The same text in the same flavour and mode: the same language, even
                # where the automata could not say so (the gold passes its own test).
                record = {"event": "equivalence", "equivalent": True, "identical": True}
            else:
                record = equivalence(pattern, gold, spec, flavour, deadline)
        except Syntax as exc:
            if exc.pattern == pattern:
                emit(syntax_error(exc))
                return 1
            record = {
                "event": "equivalence",
                "equivalent": False,
                "undecidable": f"the gold pattern does not compile: {exc.message}"[:300],
                "checked": 0,
            }
    record["nonce"] = read_nonce()
    emit(record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
