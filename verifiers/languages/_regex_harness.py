"""Regex harness: one test of a candidate pattern, inside the sandbox.

Called as ``main([program_dir, index])``. Tests are numbered positives, then
negatives, then cases, then (when there is a gold pattern) the equivalence test.
Writes one JSON record on fd 3: ``syntax_error`` (the flavour's compiler refused the
pattern, with its position), ``case`` (what the pattern did with the string), or
``equivalence`` (decided with finite automata by ``interegular``: equal, or the
shortest string on which the patterns disagree; ``undecidable`` for constructs
outside regular languages). Catastrophic backtracking ends with the sandbox's
timeout, never in the caller.
"""

from __future__ import annotations

import collections
import json
import os
import sys
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


def _wrap(pattern: str, mode: str) -> str:
    if mode == "search":
        return f"[\\s\\S]*(?:{pattern})[\\s\\S]*"
    if mode == "match":
        return f"(?:{pattern})[\\s\\S]*"
    return f"(?:{pattern})"


def equivalence(candidate: str, gold: str, spec: dict[str, Any]) -> dict[str, Any]:
    import interegular

    mode = spec["mode"]
    try:
        mine = interegular.parse_pattern(_wrap(candidate, mode)).to_fsm()
        theirs = interegular.parse_pattern(_wrap(gold, mode)).to_fsm()
    except Exception as exc:  # backreferences, lookarounds, unusual syntax
        return on_examples(candidate, gold, spec, f"{type(exc).__name__}: {exc}"[:300])
    difference = mine.symmetric_difference(theirs)  # type: ignore[no-untyped-call]
    witness = shortest_string(difference)
    if witness is None:
        return {"event": "equivalence", "equivalent": True}
    gold_accepts = theirs.accepts(witness) if _plain(witness) else None
    return {
        "event": "equivalence",
        "equivalent": False,
        "witness": witness,
        "gold_accepts": gold_accepts,
    }


def shortest_string(fsm: Any) -> str | None:
    """A shortest string the automaton accepts (breadth-first over states), or None.

    (``FSM.strings()`` enumerates strings, not states: exponential in the length.)
    """
    if fsm.initial in fsm.finals:
        return ""
    mentioned = {k for k in fsm.alphabet.keys() if isinstance(k, str)}  # noqa: SIM118
    spare = next((c for c in _PRINTABLE if c not in mentioned), "\u00a7")
    representative: dict[Any, str] = {}
    for symbol, index in fsm.alphabet.items():
        char = symbol if isinstance(symbol, str) else spare
        # Prefer a readable character for a class of symbols.
        if index not in representative or (
            char in _PRINTABLE and representative[index] not in _PRINTABLE
        ):
            representative[index] = char
    parent: dict[Any, tuple[Any, str] | None] = {fsm.initial: None}
    queue = collections.deque([fsm.initial])
    while queue:
        state = queue.popleft()
        for index, target in sorted(fsm.map.get(state, {}).items(), key=lambda kv: str(kv[0])):
            if target in parent:
                continue
            parent[target] = (state, representative.get(index, spare))
            if target in fsm.finals:
                chars = []
                node: Any = target
                while (step := parent[node]) is not None:
                    node, char = step
                    chars.append(char)
                return "".join(reversed(chars))
            queue.append(target)
    return None


def _plain(text: str) -> bool:
    return all(c in _PRINTABLE or c.isalnum() for c in text)


def on_examples(candidate: str, gold: str, spec: dict[str, Any], reason: str) -> dict[str, Any]:
    """Outside regular languages: agree with the gold pattern on every example string."""
    texts = [case["text"] for case in spec["cases"]]
    record: dict[str, Any] = {"event": "equivalence", "undecidable": reason, "checked": len(texts)}
    if not texts:
        record["equivalent"] = False
        return record
    mine = compile_pattern(
        spec["flavor"] if spec["flavor"] != "javascript" else "python", candidate
    )
    theirs = compile_pattern(spec["flavor"] if spec["flavor"] != "javascript" else "python", gold)
    method = spec["mode"]
    for text in texts:
        if (getattr(mine, method)(text) is None) != (getattr(theirs, method)(text) is None):
            record.update(
                equivalent=False,
                witness=text,
                gold_accepts=getattr(theirs, method)(text) is not None,
            )
            return record
    record["equivalent"] = True
    return record


def main(argv: list[str]) -> int:
    program_dir, index = argv[0], int(argv[1])
    spec = json.loads(program_file(program_dir, "spec.json"))
    pattern = program_file(program_dir, "pattern.txt").decode("utf-8", "surrogateescape")
    cases = spec["cases"]
    if index >= len(cases):
        record = equivalence(pattern, spec["gold"], spec)
    else:
        try:
            compiled = compile_pattern(spec["flavor"], pattern)
        except Exception as exc:
            emit(
                {
                    "event": "syntax_error",
                    "message": str(exc)[:1000],
                    "position": getattr(exc, "pos", None),
                }
            )
            return 1
        record = run_case(compiled, spec["mode"], cases[index])
    record["nonce"] = read_nonce()
    emit(record)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
