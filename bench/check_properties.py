"""Benchmark `pinb claims check-properties` at N generated witnesses per claim on the stand-in, whole process.

    .venv/bin/python bench/check_properties.py [--witnesses 50] [CHAPTER…]

Runs `pinb claims check-properties CHAPTER… --witnesses N --json` once as a user runs it and prints the wall time
and the CPU time (on a loaded machine the CPU time is the figure to compare with the target),
the target (≤ 300 s for both chapters at 50 witnesses on 2 cores), the number of property claims and witnesses
judged, the claims' statuses, the highest share of generated witnesses that miss the premise (NOT EXERCISED) with
the five claims that miss it most (the line is 20 %), and the slowest claims (from the per-claim progress lines).
The machine's load average is printed before and after: on a shared machine, quote the figures with it. A
benchmark, not a test: it exits 0 whatever the figures are.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 300.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapter ids (default: every chapter)")
    parser.add_argument("--witnesses", type=int, default=50, help="generated witnesses per claim (default 50)")
    args = parser.parse_args()
    pinb = Path(sys.executable).with_name("pinb")
    command = [str(pinb), "claims", "check-properties", *args.chapters, "--witnesses", str(args.witnesses), "--json"]
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()), f"({os.cpu_count()} cores)")
    print("$", " ".join(command[1:]).replace(str(pinb), "pinb"))
    started = time.monotonic()
    stamps: list[tuple[float, str]] = []
    # stdout (the JSON, large) goes to a file: reading stderr to its end while stdout fills a pipe would deadlock
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stdout:
        with subprocess.Popen(command, cwd=REPO, stdout=stdout, stderr=subprocess.PIPE, text=True) as process:
            assert process.stderr is not None
            for line in process.stderr:
                stamps.append((time.monotonic() - started, line.strip()))
                print(f"  {stamps[-1][0]:7.1f} s  {stamps[-1][1]}", flush=True)
        elapsed = time.monotonic() - started
        stdout.seek(0)
        out = stdout.read()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("load average after: ", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"CPU time of the command: {usage.ru_utime + usage.ru_stime:.1f} s (user {usage.ru_utime:.1f} s)")
    try:
        data = json.loads(out)
    except ValueError:
        print(f"check-properties printed no JSON (exit {process.returncode}); its stderr ends: {stamps[-3:]}")
        return 0
    claims = data["claims"]
    witnesses = sum(len(claim.get("witnesses", ())) for claim in claims)
    statuses: dict[str, int] = {}
    for claim in claims:
        statuses[claim["status"]] = statuses.get(claim["status"], 0) + 1
    verdict = "within" if elapsed <= TARGET_SECONDS else "OVER"
    print(
        f"wall time {elapsed:.1f} s for {len(claims)} property claims, {witnesses} witnesses judged "
        f"({verdict} the {TARGET_SECONDS:.0f} s target); exit {process.returncode}"
    )
    print("statuses:", ", ".join(f"{n} {status}" for status, n in sorted(statuses.items())))
    judged = sorted((len(c.get("witnesses", ())), c["claim_id"]) for c in claims if c.get("witnesses"))
    if judged:
        short = [claim_id for n, claim_id in judged if n < args.witnesses + 1]
        print(
            f"fewest witnesses judged for one claim: {judged[0][0]} ({judged[0][1]}); "
            f"{len(short)} claims with fewer than the hand-written one and {args.witnesses} generated"
        )
    shares = sorted(((c["not_exercised"], c["claim_id"]) for c in claims if "not_exercised" in c), reverse=True)
    if shares:
        print(f"highest NOT EXERCISED share of generated witnesses per claim (the line is 20 %): {shares[0][0]:.0%}")
    for share, claim_id in shares[:5]:
        flag = "OVER 20 %" if share >= 0.2 else "within"
        print(f"  {share:5.1%} NOT EXERCISED ({flag}): {claim_id}")
    durations = [(b[0] - a[0], b[1]) for a, b in zip([(0.0, ""), *stamps], stamps, strict=False)]
    for seconds, line in sorted(durations, reverse=True)[:5]:
        print(f"  slowest: {seconds:6.1f} s  {line}")
    for problem in data.get("problems", []):
        print("  problem:", problem)
    return 0


if __name__ == "__main__":
    sys.exit(main())
