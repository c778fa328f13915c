"""Name -> implementation tables for languages and runtimes.

Entries are ``"module:Class"`` strings, imported on first use. Plugins add
entries through the entry-point groups ``verifiers.languages`` and
``verifiers.runtimes`` (value: ``"module:Class"``).
"""

from __future__ import annotations

import importlib
import threading
from importlib.metadata import entry_points
from typing import Any

from verifiers.errors import UnknownNameError

#: name -> ("module:Class", aliases). Adding a language is one module and one line here.
LANGUAGE_TABLE: dict[str, tuple[str, tuple[str, ...]]] = {
    "python": ("verifiers.languages.python:PythonLanguage", ("py", "python3")),
    "javascript": ("verifiers.languages.javascript:JavaScriptLanguage", ("js", "node", "nodejs")),
    "rust": ("verifiers.languages.rust:RustLanguage", ("rs",)),
    "go": ("verifiers.languages.go:GoLanguage", ("golang",)),
    "c": ("verifiers.languages.c:CLanguage", ()),
    "java": ("verifiers.languages.java:JavaLanguage", ()),
    "cpp": ("verifiers.languages.cpp:CppLanguage", ("c++", "cxx")),
    "sql": ("verifiers.languages.sql:SqlLanguage", ("sqlite", "postgresql", "duckdb")),
    "regex": ("verifiers.languages.regex:RegexLanguage", ("regexp", "re2")),
}
LANGUAGES: dict[str, str] = {name: target for name, (target, _) in LANGUAGE_TABLE.items()}
LANGUAGE_ALIASES: dict[str, str] = {
    alias: name for name, (_, aliases) in LANGUAGE_TABLE.items() for alias in aliases
}
RUNTIMES: dict[str, str] = {
    "local": "verifiers.runtimes.local:LocalRuntime",
    "docker": "verifiers.runtimes.docker:DockerRuntime",
    # Whole verifications sent to a verification service (verifiers serve).
    "remote": "verifiers.runtimes.remote:RemoteRuntime",
}

_lock = threading.Lock()
_instances: dict[tuple[str, str], Any] = {}
_plugins_loaded = False


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for group, table in (("verifiers.languages", LANGUAGES), ("verifiers.runtimes", RUNTIMES)):
        for ep in entry_points(group=group):
            table.setdefault(ep.name, ep.value)


def _import(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def language_names() -> list[str]:
    """Registered language names."""
    _load_plugins()
    return sorted(LANGUAGES)


def runtime_names() -> list[str]:
    """Registered runtime names."""
    _load_plugins()
    return sorted(RUNTIMES)


def canonical_language(name: str) -> str:
    """The registered name for a language name or alias (raises UnknownNameError)."""
    _load_plugins()
    key = name.strip().lower()
    key = LANGUAGE_ALIASES.get(key, key)
    if key not in LANGUAGES:
        raise UnknownNameError("language", name, list(LANGUAGES))
    return key


def get_language(name: str) -> Any:
    """The shared instance of a language, by name or alias."""
    key = canonical_language(name)
    return _shared("language", key, LANGUAGES[key])


def get_runtime(name: str) -> Any:
    """The shared instance of a runtime, by name (default configuration)."""
    _load_plugins()
    if name not in RUNTIMES:
        raise UnknownNameError("runtime", name, list(RUNTIMES))
    return _shared("runtime", name, RUNTIMES[name])


def _shared(kind: str, name: str, target: str) -> Any:
    with _lock:
        instance = _instances.get((kind, name))
        if instance is None:
            instance = _instances[(kind, name)] = _import(target)()
        return instance
