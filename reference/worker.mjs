#!/usr/bin/env node
// pinb reference worker: one warm Node process that runs many scenarios on one Pi package set, one at a time.
//
//   node reference/worker.mjs --packages reference/pi-<version> --reply-fd <N>
//
// Requests arrive on stdin, one JSON object a line: {"id": <n>, "text": "<the scenario file's text>"}. Each reply is
// one JSON line written to file descriptor N (never stdout, so nothing a scenario prints can break the protocol):
// {"id": <n>, "trace": "<the JSONL trace, exactly as runner.mjs prints it>"} or {"id": <n>, "error": "<stack>"},
// with "recycle": true when the scenario left something running (a timer, a socket, a handle): the worker then
// exits after the reply and its owner starts a fresh one. The first line on N is {"ready": true}.
//
// Between scenarios the worker puts back what a run may change in the process: the environment, the working
// directory and the global object's own properties. The Pi modules stay loaded (that is the point of the worker);
// the state they keep is registries keyed by name and counters whose values never reach a trace (ids are relabelled
// call#N / entry#N), which the project's tests check by running a scenario alone and after others, byte for byte.
// The worker exits when stdin closes or when its parent process is gone.
import { writeSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { importPackage, runScenario } from "./runner.mjs";

function parseArgs(argv) {
	let packages;
	let replyFd;
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--packages") packages = argv[++i];
		else if (argv[i] === "--reply-fd") replyFd = Number(argv[++i]);
		else throw new Error(`unexpected argument: ${argv[i]}`);
	}
	if (!packages || !Number.isInteger(replyFd)) {
		throw new Error("usage: node worker.mjs --packages <reference/pi-VERSION> --reply-fd <N>");
	}
	return { packages: resolve(packages), replyFd };
}

const { packages, replyFd } = parseArgs(process.argv.slice(2));

function reply(message) {
	const data = Buffer.from(`${JSON.stringify(message)}\n`, "utf8");
	let written = 0;
	while (written < data.length) written += writeSync(replyFd, data, written);
}

// A layer's packages are loaded before the first scenario that needs them (layer agent at start, pi-coding-agent
// before the first layer-app scenario); what they put on the global object is theirs to keep.
const LAYER_PACKAGES = { agent: ["pi-ai", "pi-agent-core"], app: ["pi-ai", "pi-agent-core", "pi-coding-agent"] };
const loaded = new Set();

async function load(layer) {
	for (const name of LAYER_PACKAGES[layer] ?? []) {
		if (loaded.has(name)) continue;
		loaded.add(name);
		try {
			await importPackage(packages, name);
		} catch {
			// not in this package set (pi-coding-agent on 1.0.3): the scenario gets the runner's own error
		}
	}
	for (const key of Reflect.ownKeys(globalThis)) baseGlobals.add(key);
}

// What a scenario may change in the process, taken before the first scenario and put back after each.
const baseEnv = { ...process.env };
const baseCwd = process.cwd();
const baseGlobals = new Set(Reflect.ownKeys(globalThis));

function restoreProcess() {
	for (const key of Object.keys(process.env)) if (!(key in baseEnv)) delete process.env[key];
	for (const [key, value] of Object.entries(baseEnv)) if (process.env[key] !== value) process.env[key] = value;
	if (process.cwd() !== baseCwd) process.chdir(baseCwd);
	for (const key of Reflect.ownKeys(globalThis)) {
		if (!baseGlobals.has(key) && Reflect.getOwnPropertyDescriptor(globalThis, key)?.configurable) {
			delete globalThis[key];
		}
	}
}

// Handles a run leaves behind (timers, sockets, child handles) beyond those the idle worker holds.
function resourceCounts() {
	const counts = new Map();
	for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
	return counts;
}

function leftBehind(before, after) {
	return [...after].some(([kind, n]) => n > (before.get(kind) ?? 0));
}

// A run may end with a timer about to fire (a stream's last tick, a retry delay it aborted): give such handles a
// moment to finish before deciding the worker must be replaced.
const LINGER_MS = 2000;

async function stillBusy(before) {
	const start = Date.now();
	while (leftBehind(before, resourceCounts())) {
		if (Date.now() - start > LINGER_MS) return true;
		await new Promise((done) => setTimeout(done, 5).unref());
		await settle(); // a timer counts as active while its own callback runs: look from outside it
	}
	return false;
}

const settle = () => new Promise((done) => setImmediate(() => setImmediate(done)));

async function serve(request) {
	const chunks = [];
	let before = resourceCounts();
	let result;
	try {
		const scenario = JSON.parse(request.text);
		await load(scenario?.layer);
		before = resourceCounts();
		await runScenario(scenario, packages, (text) => chunks.push(text));
		result = { id: request.id, trace: chunks.join("") };
	} catch (error) {
		result = { id: request.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
	}
	await settle(); // a rejection the run left unhandled surfaces here, while this scenario is still the one running
	restoreProcess();
	if (await stillBusy(before)) result.recycle = true;
	reply(result);
	return result.recycle === true;
}

const parent = process.ppid;
setInterval(() => {
	if (process.ppid !== parent) process.exit(0);
}, 500).unref();

await load("agent");

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue = [];
let busy = false;
let closed = false;

async function drain() {
	if (busy) return;
	busy = true;
	while (queue.length > 0) {
		const line = queue.shift();
		let request;
		try {
			request = JSON.parse(line);
		} catch (error) {
			reply({ id: null, error: `not a request: ${error.message}` });
			continue;
		}
		if (await serve(request)) process.exit(0);
	}
	busy = false;
	if (closed) process.exit(0);
}

lines.on("line", (line) => {
	if (!line.trim()) return;
	queue.push(line);
	void drain();
});
lines.on("close", () => {
	closed = true;
	if (!busy) process.exit(0);
});
reply({ ready: true });
