#!/usr/bin/env python3
"""Fails when code in src/ reads a clock itself instead of the injected Clock (src/util/clock.h).

Decisions that depend on time (rate limits, leases, token expiry, billing ticks, waits a request
makes) read the Clock, so tests drive them with ManualClock. What stays on the real clocks is
listed in ALLOWED with its reason: measurements of real elapsed time and deadlines that a real
I/O library enforces itself (docs/architecture.md, "Time"). A new direct read must be added there
on purpose, or go through the Clock.
"""
import pathlib
import re
import sys

READ = re.compile(
    r"\b(?:steady_clock|system_clock|high_resolution_clock)::now\b|\bgettimeofday\s*\(|\bclock_gettime\s*\("
    r"|\b(?:std::)?time\s*\(\s*(?:nullptr|NULL|0)\s*\)")

ALLOWED = {
    "util/clock.cpp": "SystemClock itself",
    "util/log.cpp": "log line timestamps (the logger sits below the Clock's users)",
    "http/pipeline.cpp": "request latency for metrics and the access log (real elapsed time)",
    "http/server_workers.cpp": "the worker pool's starvation monitor (real thread scheduling)",
    "http/listener.cpp": "at most one refused-connection log line per second",
    "fetch/fetcher.cpp": "the fetch deadline, which libcurl enforces in real time (CURLOPT_TIMEOUT_MS)",
    "conversation/chat_client.cpp": "the chat stream deadline, which libcurl enforces in real time",
    "live/conversation_brain.cpp": "how long a session's first audio waited for a recogniser, logged "
    "(real elapsed time)",
    "api/health.cpp": "the database ping's latency in /health (real elapsed time)",
    "cli/login.cpp": "the imago CLI (a separate client binary on util only) polling a login",
    "cli/commands.cpp": "the imago CLI (a separate client binary) showing how long it has waited",
    "store/postgres/pg_room_directory.cpp": "the cadence of its background renew/prune loop; lease "
    "expiry itself is decided by the database's clock",
}


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve() / "src"
    errors = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".cc") or not path.is_file():
            continue
        rel = str(path.relative_to(root))
        if rel.endswith(("_test.cpp", "_benchmark.cpp", "_fuzz.cpp")) or rel in ALLOWED:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            code = line.split("//", 1)[0]
            if READ.search(code):
                errors.append(f"src/{rel}:{n}: reads a clock directly; use the injected Clock ({line.strip()})")
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} direct clock read(s); see docs/architecture.md, \"Time\"")
        return 1
    print("clock reads: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
