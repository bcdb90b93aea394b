"""Write this machine's folders in a report the way another machine can read them: the data folder (when
``$CLAIMCHECK_DATA_DIR`` chose it), ``$VIRTUAL_ENV``, the project root (relative; the root itself ``.``) and ``~``
(docs/reliability.md)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Places:
    """Absolute folders of this machine and the names a report writes them by, longest folder first."""

    names: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(
        cls,
        root: Path,
        *,
        home: Path | None = None,
        data_dir: Path | None = None,
        data_source: str = "",
        venv: Path | None = None,
    ) -> Places:
        """Return the places of a run rooted at ``root``; ``data_dir`` is named by ``data_source`` when a variable."""
        if venv is None and sys.prefix != sys.base_prefix:  # this Python runs in a virtual environment
            venv = Path(sys.prefix)
        found: dict[str, str] = {}
        for folder, name in (
            (home if home is not None else Path.home(), "~"),
            (root, ""),
            (venv, "$VIRTUAL_ENV"),
            (data_dir if data_source.startswith("$") else None, data_source),
        ):
            if folder is not None and str(folder) not in ("", "/"):
                found[str(folder)] = name
                found.setdefault(str(folder.resolve()), name)
        return cls(tuple(sorted(found.items(), key=lambda kv: len(kv[0]), reverse=True)))

    def shorten(self, text: str) -> str:
        """Return ``text`` with every named folder written by its name (a path under the root made relative)."""
        if not self.names:
            return text
        lookup = dict(self.names)
        pattern = "|".join(re.escape(folder) for folder, _ in self.names)

        def name(m: re.Match[str]) -> str:
            short = lookup[m.group(1)]
            return (short + m.group(2)) if short else ("" if m.group(2) else ".")

        return re.sub(rf"({pattern})(/|(?![\w.-]))", name, text)
