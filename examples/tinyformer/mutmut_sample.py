"""Draw a held-out sample of mutmut's mutants of a file and print them as catalogue entries (TOML).

    python examples/tinyformer/mutmut_sample.py qin2025/engine/model.py --count 6 --seed 0 >> catalogue.toml

mutmut (``pip install mutmut``, not a dependency of the project) proposes every mutation of its
operators (numbers, strings, operators, arguments, ...); this script takes them all, draws
``--count`` at random with ``--seed``, and writes each as a ``[[mutant]]`` with one edit to the
file (the smallest run of changed lines that occurs once). They are held out: nobody chose them
for the suite, so the catalogue expects any check to catch them.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import tempfile
from pathlib import Path

import libcst as cst
from mutmut.mutation.file_mutation import create_mutations, deep_replace


def mutants(path: Path) -> list[str]:
    """Return the file's source with each of mutmut's mutations applied, one at a time.

    mutmut reads its settings from the working folder, so this runs in an empty one that names ``path``.
    """
    code = path.read_text(encoding="utf-8")
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "setup.cfg").write_text(f"[mutmut]\nsource_paths={path.resolve()}\n")
        os.chdir(folder)
        try:
            module, mutations, _, _ = create_mutations(str(path), code)
        finally:
            os.chdir(here)
    out = []
    for m in mutations:
        mutated = deep_replace(module, m.original_node, m.mutated_node)
        assert isinstance(mutated, cst.Module)
        if mutated.code != code:
            out.append(mutated.code)
    return out


def edit(old: str, new: str) -> tuple[str, str]:
    """Return the smallest run of whole lines around the change that occurs once in ``old``, and its mutation."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    i1, i2 = ops[0][1], ops[-1][2]
    j1, j2 = ops[0][3], ops[-1][4]
    while "".join(a[i1:i2]) == "" or old.count("".join(a[i1:i2])) != 1:
        i1, j1 = max(0, i1 - 1), max(0, j1 - 1)
        i2, j2 = i2 + 1, j2 + 1
    return "".join(a[i1:i2]), "".join(b[j1:j2])


def main() -> None:
    """Print ``--count`` sampled mutants of the file as ``[[mutant]]`` TOML entries."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--count", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    code = args.file.read_text(encoding="utf-8")
    found = mutants(args.file)
    picked = sorted(random.Random(args.seed).sample(range(len(found)), min(args.count, len(found))))
    print(f"# {len(picked)} of mutmut's {len(found)} mutants of {args.file}, drawn with seed {args.seed}")
    for k in picked:
        old, new = edit(code, found[k])
        first = next((line.strip() for line in new.splitlines() if line.strip() and line not in old), new.strip())
        print(
            f'\n[[mutant]]\nname = "mutmut_{k}"\nwhat = {json.dumps("mutmut: " + first[:90])}\n'
            'expect = ["probe", "claims", "gate", "first screen"]  # held out: any check\n'
            f'[[mutant.edit]]\nfile = "{args.file.as_posix()}"\nold = {json.dumps(old)}\nnew = {json.dumps(new)}'
        )


if __name__ == "__main__":
    main()
