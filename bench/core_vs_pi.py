"""The stand-in agent core against real Pi 1.6.0 on the same N-turn workload, in one invocation.

Workload (bench/core_turns.py): one prompt, N-1 turns of one word_count tool call each, then a final answer; a
listener counts every event. The stand-in half runs pinb.agent in this Python process; the Pi half runs
pi-agent-core + pi-ai 1.6.0 (the reference package set) in Node over Pi's faux provider. Each half times only the
``prompt()`` call, best of ``--repeat`` runs. Prints both times and the stand-in/Pi ratio for N = 100, 1,000, 3,000
(goal: ratio <= 1.0 at N = 1,000), and each side's per-turn growth (3,000 vs 100).

    python bench/core_vs_pi.py [--repeat 3] [--sizes 100 1000 3000]

Needs the reference installed (`pinb reference install`). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size and side; the fastest counts")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 3000])
    args = parser.parse_args()
    # run_standin gives (wall, CPU) seconds; the Pi half measures wall time, so wall is compared.
    standin = {n: min(asyncio.run(run_standin(n))[0] for _ in range(args.repeat)) for n in args.sizes}
    pi = run_pi(args.sizes, args.repeat)
    print(f"stand-in: pinb.agent (Python {sys.version.split()[0]}); Pi: pi-agent-core {PI_VERSION} "
          f"(Node {reference.node_version()}); best of {args.repeat}")  # fmt: skip
    print(f"{'turns':>6} {'stand-in s':>11} {'Pi s':>9} {'ratio':>7} {'stand-in ms/turn':>17} {'Pi ms/turn':>11}")
    for n in args.sizes:
        print(
            f"{n:>6} {standin[n]:>11.3f} {pi[n]:>9.3f} {standin[n] / pi[n]:>7.2f}"
            f" {standin[n] / n * 1000:>17.3f} {pi[n] / n * 1000:>11.3f}"
        )
    first, last = min(args.sizes), max(args.sizes)
    if first != last:
        growth_standin = (standin[last] / last) / (standin[first] / first)
        growth_pi = (pi[last] / last) / (pi[first] / first)
        print(f"per-turn growth {last}/{first}: stand-in {growth_standin:.2f}, Pi {growth_pi:.2f}")
    if 1000 in standin:
        print(f"ratio at N=1000: {standin[1000] / pi[1000]:.2f} (goal <= 1.0)")


if __name__ == "__main__":
    main()
