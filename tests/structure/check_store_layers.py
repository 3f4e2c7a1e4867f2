#!/usr/bin/env python3
"""Fails when src/store/sql/ includes an engine folder (src/store/sqlite/, src/store/postgres/).

Inside the store, dependencies point one way: the engines implement sql/'s interfaces and the
table stores in sql/ know no engine (docs/architecture.md, "One store, two databases"). Code that
uses both engines lives above them (store/stores.cpp, store/contracts/).
"""
import pathlib
import re
import sys

ENGINES = ("store/sqlite/", "store/postgres/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    errors = []
    for path in sorted((root / "src/store/sql").rglob("*")):
        if path.suffix not in (".h", ".cpp") or not path.is_file():
            continue
        for m in INCLUDE.finditer(path.read_text(errors="replace")):
            if m.group(1).startswith(ENGINES):
                errors.append(f"{path.relative_to(root)}: includes {m.group(1)} (sql/ knows no engine)")
    for e in errors:
        print(e)
    if errors:
        return 1
    print("store layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
