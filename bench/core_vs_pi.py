"""The stand-in against real Pi 1.6.0 on the same N-turn workload, in one invocation, in two modes.

Workload: one prompt, N-1 turns of one word_count tool call each, then a final answer.

``core`` (untraced, in process; bench/core_turns.py): a listener counts every event. The stand-in half runs
pinb.agent in this Python process; the Pi half runs pi-agent-core + pi-ai 1.6.0 (the reference package set) in Node
over Pi's faux provider. Each half times only the ``prompt()`` call, best of ``--repeat`` runs. Prints both times and
the stand-in/Pi ratio for N = 100, 1,000, 3,000 and each side's per-turn growth (goal: the stand-in's 3,000/100
per-turn ratio <= 1.2).

``traced`` (whole processes): the workload as a scenario, run by ``pinb scenario run --backend standin -o TRACE``
and by real Pi's runner (``node reference/runner.mjs``) writing the same trace to a file, in turn, ``--repeat`` times
each. Prints wall and CPU seconds (medians), the stand-in/Pi ratio of each pair's wall time (goal: <= 1.0 at
N = 1,000) and whether the two traces agree byte for byte after their ``meta`` lines. Layer agent by default;
``--traced-layer app`` runs the application layer, where both sides also rebuild the session context on every
request. A model line per request carries the whole context, so the trace grows with N squared (about 93 MB at
N = 1,000): keep ``--traced-sizes`` modest.

    python bench/core_vs_pi.py [--mode both|core|traced] [--repeat 3] [--sizes 100 1000 3000]
                               [--traced-sizes 1000] [--traced-layer agent|app]

Needs the reference installed (`pinb reference install`). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# The stand-in half is the core benchmark's own workload.
from core_turns import run as run_standin

from pinb.scenario import reference

PI_VERSION = "1.6.0"

# The Pi half: the same workload as core_turns.run, with chapter 01's construction (fauxProvider + createModels).
PI_SCRIPT = r"""
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const packages = process.env.PINB_PI_PACKAGES;
const load = async (name) => {
	const dir = join(packages, "node_modules", "@earendil-works", name);
	const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
	return import(pathToFileURL(join(dir, manifest.exports["."].import)).href);
};
const ai = await load("pi-ai");
const core = await load("pi-agent-core");
const schema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };

async function run(turns) {
	const faux = ai.fauxProvider();
	const models = ai.createModels();
	models.setProvider(faux.provider);
	const script = [];
	for (let i = 0; i < turns - 1; i++) {
		const call = ai.fauxToolCall("word_count", { text: `turn ${i} of the run` });
		script.push(ai.fauxAssistantMessage([call], { stopReason: "toolUse" }));
	}
	script.push(ai.fauxAssistantMessage("done"));
	faux.setResponses(script);
	const tool = {
		name: "word_count",
		label: "word_count",
		description: "Count words.",
		parameters: schema,
		async execute(_id, params) {
			const n = params.text.trim().split(/\s+/).filter(Boolean).length;
			return { content: [{ type: "text", text: String(n) }], details: { words: n } };
		},
	};
	const agent = new core.Agent({
		initialState: { systemPrompt: "You count words.", model: faux.getModel(), tools: [tool] },
		streamFn: models.streamSimple.bind(models),
	});
	let seen = 0;
	agent.subscribe(() => { seen += 1; });
	globalThis.gc?.();
	const started = performance.now();
	await agent.prompt("Count the words, turn after turn.");
	const elapsed = (performance.now() - started) / 1000;
	if (faux.getPendingResponseCount() !== 0) throw new Error("script not consumed");
	const length = agent.state.messages.length;
	if (length !== 3 + 2 * (turns - 1)) throw new Error(`unexpected transcript length ${length}`);
	return elapsed;
}

const sizes = JSON.parse(process.env.PINB_SIZES);
const repeat = Number(process.env.PINB_REPEAT);
const best = {};
for (const n of sizes) {
	let fastest = Infinity;
	for (let r = 0; r < repeat; r++) fastest = Math.min(fastest, await run(n));
	best[n] = fastest;
}
process.stdout.write(JSON.stringify(best));
"""


def run_pi(sizes: list[int], repeat: int) -> dict[int, float]:
    if not reference.is_installed(PI_VERSION):
        raise SystemExit(f"Pi {PI_VERSION} is not installed: run `pinb reference install --pi-version {PI_VERSION}`")
    env = {
        **os.environ,
        "PINB_PI_PACKAGES": str(reference.packages_dir(PI_VERSION)),
        "PINB_SIZES": json.dumps(sizes),
        "PINB_REPEAT": str(repeat),
    }
    out = subprocess.run(
        [str(reference.node_path()), "--expose-gc", "--input-type=module", "-e", PI_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"the Pi half failed: {out.stderr.strip().splitlines()[0] if out.stderr.strip() else out}")
    return {int(n): seconds for n, seconds in json.loads(out.stdout).items()}


def compare_core(sizes: list[int], repeat: int) -> None:
    # run_standin gives (wall, CPU) seconds; the Pi half measures wall time, so wall is compared. The stand-in's CPU
    # time is also shown: on a loaded machine it is the steadier figure of its per-turn growth.
    runs = {n: [asyncio.run(run_standin(n)) for _ in range(repeat)] for n in sizes}
    standin = {n: min(wall for wall, _ in runs[n]) for n in sizes}
    cpu = {n: min(seconds for _, seconds in runs[n]) for n in sizes}
    pi = run_pi(sizes, repeat)
    print(f"core (untraced, in process): pinb.agent (Python {sys.version.split()[0]}) vs pi-agent-core {PI_VERSION} "
          f"(Node {reference.node_version()}); best of {repeat}")  # fmt: skip
    print(f"{'turns':>6} {'stand-in s':>11} {'Pi s':>9} {'ratio':>7} {'stand-in ms/turn':>17} {'Pi ms/turn':>11}")
    for n in sizes:
        print(
            f"{n:>6} {standin[n]:>11.3f} {pi[n]:>9.3f} {standin[n] / pi[n]:>7.2f}"
            f" {standin[n] / n * 1000:>17.3f} {pi[n] / n * 1000:>11.3f}"
        )
    first, last = min(sizes), max(sizes)
    if first != last:
        growth_standin = (standin[last] / last) / (standin[first] / first)
        growth_pi = (pi[last] / last) / (pi[first] / first)
        growth_cpu = (cpu[last] / last) / (cpu[first] / first)
        print(f"per-turn growth {last}/{first}: stand-in {growth_standin:.2f} (CPU {growth_cpu:.2f}; goal <= 1.2), "
              f"Pi {growth_pi:.2f}")  # fmt: skip


# --- traced, whole processes ---------------------------------------------------------------------------------------


def scenario(turns: int, layer: str = "agent") -> dict[str, object]:
    """The workload as a scenario: the same prompt, tool and script as the core mode."""
    calls = [
        {
            "content": [{"type": "toolCall", "name": "word_count", "arguments": {"text": f"turn {i} of the run"}}],
            "stopReason": "toolUse",
        }
        for i in range(turns - 1)
    ]
    return {
        "id": f"bench-{turns}-turns",
        "description": f"{turns} turns: one word_count tool call each, then a final answer.",
        "layer": layer,
        "system_prompt": "You count words.",
        "prompt": "Count the words, turn after turn.",
        "tools": [{"name": "word_count", "behavior": {"kind": "word_count"}}],
        "responses": [*calls, {"content": [{"type": "text", "text": "done"}], "stopReason": "stop"}],
    }


#: pinb bounds a scenario run to 60 s by default; a loaded machine can take longer at these sizes.
LIMIT = ["--timeout", "3600"]


def pinb_command() -> list[str]:
    script = Path(sys.executable).with_name("pinb")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from pinb.cli import main; sys.exit(main())"]


def timed(command: list[str], stdout: Path | None) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process; CPU is user + system of the child, as the kernel counts it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(stdout or os.devnull, "wb") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {done.stderr.decode(errors='replace').strip()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def after_meta(path: Path) -> bytes:
    data = path.read_bytes()
    return data[data.index(b"\n") + 1 :]


def compare_traced(sizes: list[int], repeat: int, layer: str) -> None:
    if not reference.is_installed(PI_VERSION):
        raise SystemExit(f"Pi {PI_VERSION} is not installed: run `pinb reference install --pi-version {PI_VERSION}`")
    node = [
        str(reference.node_path()),
        str(reference.runner_path()),
        "--packages",
        str(reference.packages_dir(PI_VERSION)),
    ]
    pinb = pinb_command()
    print(f"traced (whole processes): pinb scenario run --backend standin (Python {sys.version.split()[0]}) vs "
          f"node reference/runner.mjs, Pi {PI_VERSION} (Node {reference.node_version()}); layer {layer}; "
          f"{repeat} pairs, in turn; medians")  # fmt: skip
    print(
        f"{'turns':>6} {'trace MB':>9} {'stand-in s':>11} {'Pi s':>8} {'ratio':>6} {'pair ratios':>17}"
        f" {'stand-in cpu s':>15} {'Pi cpu s':>9} {'same trace':>11}"
    )
    with tempfile.TemporaryDirectory(prefix="pinb-bench-") as tmp:
        folder = Path(tmp)
        for n in sizes:
            path = folder / f"bench-{n}.json"
            path.write_text(json.dumps(scenario(n, layer)), encoding="utf-8")
            ours, theirs = folder / f"standin-{n}.jsonl", folder / f"pi-{n}.jsonl"
            standin_cmd = [*pinb, "scenario", "run", str(path), "--backend", "standin", "-o", str(ours), *LIMIT]
            pi_cmd = [*node, str(path)]
            timed(standin_cmd, None)  # warm-up: file caches, bytecode, Node's compile cache
            timed(pi_cmd, theirs)
            pairs = [(timed(standin_cmd, None), timed(pi_cmd, theirs)) for _ in range(repeat)]
            ratios = sorted(a[0] / b[0] for a, b in pairs)
            same = after_meta(ours) == after_meta(theirs)
            size = ours.stat().st_size / 1e6
            print(
                f"{n:>6} {size:>9.1f} {statistics.median(a[0] for a, _ in pairs):>11.3f}"
                f" {statistics.median(b[0] for _, b in pairs):>8.3f} {statistics.median(ratios):>6.2f}"
                f" {f'{ratios[0]:.2f}..{ratios[-1]:.2f}':>17}"
                f" {statistics.median(a[1] for a, _ in pairs):>15.3f} {statistics.median(b[1] for _, b in pairs):>9.3f}"
                f" {'yes' if same else 'NO':>11}"
            )
            ours.unlink()
            theirs.unlink()
    if 1000 in sizes:
        print("goal: ratio <= 1.0 at N = 1000")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("both", "core", "traced"), default="both")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size and side (core: the fastest counts)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 3000], help="turns, core mode")
    parser.add_argument("--traced-sizes", type=int, nargs="+", default=[1000], help="turns, traced mode")
    parser.add_argument("--traced-layer", choices=("agent", "app"), default="agent", help="scenario layer, traced mode")
    args = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at start: {load}; {os.cpu_count()} CPUs")
    if args.mode in ("both", "core"):
        compare_core(args.sizes, args.repeat)
    if args.mode in ("both", "traced"):
        compare_traced(args.traced_sizes, args.repeat, args.traced_layer)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
