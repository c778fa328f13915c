"""The functions an ELF binary defines, read from its symbol table (no tool needed).

C and C++ programs share their binary with the tests' code, and a program that defines a
function of the C library (``memcmp``, ``rand``) replaces it for every caller in that
binary: the tests', and the library's inline code (``std::string``'s ``==`` calls
``memcmp``). Which definition a name binds to is decided by the compiler and the linker,
not by the source's spelling (``asm`` labels, a definition matching a header's
``extern "C"`` declaration), so the built binary is where it is read.
"""

from __future__ import annotations

import functools
import glob
import os
import struct
from dataclasses import dataclass

#: ``SHT_SYMTAB`` and ``SHT_DYNSYM``: the section types holding symbols.
_SYMTAB, _DYNSYM = 2, 11
#: Symbol types of functions (``STT_FUNC``, ``STT_GNU_IFUNC``) and bindings of symbols
#: other objects can bind to (``STB_GLOBAL``, ``STB_WEAK``).
_FUNCTION_TYPES = (2, 10)
_GLOBAL, _WEAK = 1, 2
#: Where the host's C library lives (Debian's multiarch directories first).
_LIBRARY_DIRS = (
    "/lib/*-linux-gnu",
    "/usr/lib/*-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
)


class ElfError(ValueError):
    """The data is not a 64-bit little-endian ELF file this reader understands."""


@dataclass(frozen=True)
class Symbol:
    """A function a binary defines."""

    name: str
    #: ``STB_GLOBAL`` (strong) rather than ``STB_WEAK`` (inline functions and template
    #: instantiations are weak: every translation unit that uses them emits a copy).
    strong: bool


def defined_functions(data: bytes, dynamic: bool = False) -> list[Symbol]:
    """The global and weak functions ``data`` (an ELF64 file) defines.

    Reads the static symbol table (``.symtab``), or the dynamic one (``.dynsym``) when
    ``dynamic``: what a shared library exports.

    Raises:
        ElfError: Not an ELF64 little-endian file, or a malformed one.
    """
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise ElfError("not a 64-bit little-endian ELF file")
    wanted = _DYNSYM if dynamic else _SYMTAB
    try:
        (table,) = struct.unpack_from("<Q", data, 0x28)
        entry_size, count = struct.unpack_from("<HH", data, 0x3A)
        sections = [
            struct.unpack_from("<IIQQQQIIQQ", data, table + n * entry_size) for n in range(count)
        ]
        out: list[Symbol] = []
        for _, kind, _, _, offset, size, link, _, _, _ in sections:
            if kind != wanted:
                continue
            strings = sections[link][4]
            for at in range(offset, offset + size - 23, 24):
                name_at, info, _, section, _, _ = struct.unpack_from("<IBBHQQ", data, at)
                binding, symbol_type = info >> 4, info & 0xF
                if section == 0 or symbol_type not in _FUNCTION_TYPES:
                    continue  # undefined (imported), or not a function
                if binding not in (_GLOBAL, _WEAK):
                    continue
                start = strings + name_at
                name = data[start : data.index(b"\0", start)].decode("utf-8", "replace")
                out.append(Symbol(name, strong=binding == _GLOBAL))
        return out
    except (struct.error, IndexError, ValueError) as err:
        raise ElfError(f"malformed ELF file: {err}") from None


@functools.cache
def c_library_functions() -> frozenset[str]:
    """The functions the host's C and math libraries export (empty where none is found).

    The sandbox runs the host's own ``/usr`` (the local runtime) or an image built from
    the same distribution's packages (Docker), so the names are the ones its builds link.
    """
    names: set[str] = set()
    for library in ("libc.so.6", "libm.so.6"):
        for pattern in _LIBRARY_DIRS:
            found = [p for p in glob.glob(os.path.join(pattern, library)) if os.path.isfile(p)]
            if not found:
                continue
            try:
                with open(found[0], "rb") as f:
                    names |= {s.name for s in defined_functions(f.read(), dynamic=True)}
            except (OSError, ElfError):
                continue
            break
    # Versioned internal names (``__libc_start_main``) are the implementation's.
    return frozenset(n for n in names if not n.startswith("_"))
