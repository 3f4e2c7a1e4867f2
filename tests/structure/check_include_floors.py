#!/usr/bin/env python3
"""Fails when an #include in src/ points up a floor (docs/architecture.md, "Floors").

A folder may include its own files and folders on a lower floor, never a folder above it, and
never a folder on its own floor unless the pair is listed in SAME_FLOOR_ALLOWED below. A folder
missing from FLOORS fails the check too, so a new subsystem is placed on purpose.
"""
import pathlib
import re
import sys

# Lowest first. Keep in step with docs/architecture.md.
FLOORS = [
    ["util"],
    ["config", "billing", "limits", "blobs", "fetch"],
    ["core"],  # the dependency bag: forward declarations only
    ["store"],
    ["auth", "speech", "webhooks", "avatar", "files"],
    ["agents"],  # the agent's one home: jobs and live ask it for an agent's model and settings
    ["jobs", "conversation", "sessions"],
    ["http", "live"],
    ["api"],
    ["main", "cli"],  # cli: the imago binary, a client of the public API (util only)
]
# Same-floor pairs that are part of the design (the avatar renderer speaks through speech).
SAME_FLOOR_ALLOWED = {("avatar", "speech"), ("live", "http")}  # live rooms talk to viewers through http/websocket.h
# Shims kept only so that older branches still build; they may not be included by new code.
SHIMS = {"api/services.h": "core/services.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve() / "src"
    floor_of = {d: i for i, names in enumerate(FLOORS) for d in names}
    errors = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(root)
        folder = rel.parts[0]
        if len(rel.parts) == 1:
            continue
        if folder not in floor_of:
            errors.append(f"src/{rel}: folder '{folder}' has no floor in tests/structure/check_include_floors.py")
            continue
        text = path.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            target, rest = m.group(1), m.group(2)
            if target == folder or target not in floor_of:
                continue  # own folder, or not a src/ folder (e.g. "support/test_server.h")
            inc = f"{target}/{rest}"
            if inc in SHIMS and str(rel) != inc:
                errors.append(f"src/{rel}: includes the shim {inc}; include {SHIMS[inc]}")
                continue
            up = floor_of[target] > floor_of[folder]
            same = floor_of[target] == floor_of[folder] and (folder, target) not in SAME_FLOOR_ALLOWED
            if up or same:
                where = "up" if up else "sideways on"
                errors.append(f"src/{rel}: includes {inc}, {where} a floor ({folder} -> {target})")
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} include(s) break the floors of docs/architecture.md")
        return 1
    print("include floors: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
