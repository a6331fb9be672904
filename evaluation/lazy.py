"""Names a package re-exports, imported on first use (PEP 562 module ``__getattr__``).

``evaluation.trec`` and ``evaluation.measures`` list where each public name lives; a
light module (``evaluation.trec.small``) is imported without loading pandas or pyarrow
behind the others. Imports nothing but the standard library.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_names(
    package: str, home: dict[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose names live in the modules
    ``home`` maps them to; a name once imported is kept in the package's namespace."""
    namespace = vars(importlib.import_module(package))

    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(home))

    return __getattr__, __dir__
