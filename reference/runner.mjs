#!/usr/bin/env node
// pinb reference runner: runs one declarative scenario on the real Pi packages and prints its trace (JSONL).
//
//   node reference/runner.mjs --packages reference/pi-<version> <scenario.json>
//
// `runScenario` is also what reference/worker.mjs calls, many times in one process.
//
// The trace format is the project's scenario contract (scenario-format.md): seq, source, type, stream flag,
// then the fields of each event type; tool-call and entry ids become call#N / entry#N labels by first
// appearance; no timestamps, usage, raw ids or working directories. Nothing here touches the host: tools are
// simulated, bash is never executed, sessions and settings live in memory.
import { readFileSync, existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync, realpathSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";

// ---------------------------------------------------------------------------------------------------------------
// Arguments and package loading

function parseArgs(argv) {
	let packages;
	let scenarioPath;
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--packages") packages = argv[++i];
		else if (!scenarioPath) scenarioPath = argv[i];
		else throw new Error(`unexpected argument: ${argv[i]}`);
	}
	if (!packages || !scenarioPath) {
		throw new Error("usage: node runner.mjs --packages <reference/pi-VERSION> <scenario.json>");
	}
	return { packages: resolve(packages), scenarioPath: resolve(scenarioPath) };
}

function packageDir(packages, name) {
	return join(packages, "node_modules", "@earendil-works", name);
}

function packageVersion(packages, name) {
	const file = join(packageDir(packages, name), "package.json");
	return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : undefined;
}

export async function importPackage(packages, name) {
	const dir = packageDir(packages, name);
	const manifestPath = join(dir, "package.json");
	if (!existsSync(manifestPath)) {
		throw new Error(`@earendil-works/${name} is not installed in ${packages} (run: pinb reference install)`);
	}
	const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
	const entry = manifest.exports?.["."]?.import ?? manifest.main ?? "index.js";
	return import(pathToFileURL(join(dir, entry)).href);
}

// ---------------------------------------------------------------------------------------------------------------
// Trace writer

class Trace {
	// `out` receives each line of text (the CLI writes it to stdout; the worker collects it).
	constructor(out) {
		this.out = out;
		this.seq = 0;
		this.callLabels = new Map();
		this.entryLabels = new Map();
	}

	call(id) {
		if (id === undefined || id === null) return id;
		if (!this.callLabels.has(id)) this.callLabels.set(id, `call#${this.callLabels.size + 1}`);
		return this.callLabels.get(id);
	}

	entry(id) {
		if (id === undefined || id === null) return id;
		if (!this.entryLabels.has(id)) this.entryLabels.set(id, `entry#${this.entryLabels.size + 1}`);
		return this.entryLabels.get(id);
	}

	// `fields` is a list of [key, value] pairs, or a function of the trace (so labels are assigned when the line
	// is written, in line order).
	write(source, type, fields = [], stream = false) {
		const line = { seq: ++this.seq, source, type };
		if (stream) line.stream = true;
		const pairs = typeof fields === "function" ? fields(this) : fields;
		for (const [key, value] of pairs) {
			if (value !== undefined) line[key] = value;
		}
		this.out(`${scrubPaths(JSON.stringify(line))}\n`);
		return line;
	}
}

const STREAM_TYPES = new Set(["message_update", "tool_execution_update"]);

function blocksText(content) {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return undefined;
	const texts = content.filter((block) => block && block.type === "text").map((block) => block.text);
	return texts.length > 0 ? texts.join("") : undefined;
}

function toolCallsOf(message, trace) {
	if (!Array.isArray(message.content)) return undefined;
	const calls = message.content.filter((block) => block && block.type === "toolCall");
	if (calls.length === 0) return undefined;
	return calls.map((call) => ({ id: trace.call(call.id), name: call.name, args: call.arguments }));
}

// The message summary of scenario-format.md ("Message summary").
function messageSummary(message, trace, end) {
	if (!message || typeof message !== "object") return [];
	const role = message.role;
	switch (role) {
		case "user":
			return [
				["role", role],
				["text", blocksText(message.content)],
			];
		case "custom":
			return [
				["role", role],
				["customType", message.customType],
				["text", blocksText(message.content)],
			];
		case "assistant":
			if (!end) {
				return [
					["role", role],
					["stopReason", message.stopReason],
				];
			}
			return [
				["role", role],
				["stopReason", message.stopReason],
				["text", blocksText(message.content)],
				["toolCalls", toolCallsOf(message, trace)],
				["errorMessage", message.errorMessage],
			];
		case "toolResult":
			return [
				["role", role],
				["toolCallId", trace.call(message.toolCallId)],
				["toolName", message.toolName],
				["isError", message.isError],
				["text", blocksText(message.content)],
			];
		default:
			return [["role", role]];
	}
}

function summaryObject(message, trace) {
	return Object.fromEntries(messageSummary(message, trace, true).filter(([, value]) => value !== undefined));
}

function roles(messages) {
	return Array.isArray(messages) ? messages.map((message) => message?.role) : undefined;
}

function toolResultsOf(results, trace) {
	if (!Array.isArray(results)) return undefined;
	return results.map((result) => ({ toolCallId: trace.call(result.toolCallId), isError: result.isError }));
}

function resultText(result) {
	return result && typeof result === "object" ? blocksText(result.content) : undefined;
}

// Fields of one event, by type (scenario-format.md "Fields by event type"). `ext` adds the extension-only fields.
function eventFields(event, trace, ext) {
	switch (event.type) {
		case "agent_start":
			return [];
		case "agent_end":
			// willRetry (session only) is written when true: a retry follows this agent_end.
			return [
				["messages", roles(event.messages)],
				["willRetry", event.willRetry === true ? true : undefined],
			];
		case "turn_start":
			return ext ? [["turnIndex", event.turnIndex]] : [];
		case "turn_end":
			return ext
				? [
						["turnIndex", event.turnIndex],
						["toolResults", toolResultsOf(event.toolResults, trace)],
						["outcome", event.outcome],
						["continue", event.continue],
					]
				: [["toolResults", toolResultsOf(event.toolResults, trace)]];
		case "message_start":
			return messageSummary(event.message, trace, false);
		case "message_end":
			return messageSummary(event.message, trace, true);
		case "message_update":
			return [["role", event.message?.role]];
		case "tool_execution_start":
			return [
				["toolName", event.toolName],
				["toolCallId", trace.call(event.toolCallId)],
				["args", event.args],
			];
		case "tool_execution_update":
			return [
				["toolName", event.toolName],
				["toolCallId", trace.call(event.toolCallId)],
			];
		case "tool_execution_end":
			return [
				["toolName", event.toolName],
				["toolCallId", trace.call(event.toolCallId)],
				["isError", event.isError],
				["text", resultText(event.result)],
				["details", event.result?.details],
			];
		case "agent_before_settle":
			return ext
				? [
						["outcome", event.outcome],
						["continue", event.continue],
					]
				: [];
		case "agent_settled":
			return [["aborted", event.aborted]];
		case "queue_update":
			return [
				["steering", event.steering],
				["followUp", event.followUp],
			];
		case "entry_appended":
			return [
				["entryType", event.entry?.type],
				["entryId", trace.entry(event.entry?.id)],
				["customType", event.entry?.customType],
			];
		case "input":
			return [
				["text", event.text],
				["inputSource", event.source],
				["streamingBehavior", event.streamingBehavior],
			];
		case "before_agent_start":
			return [
				["messageType", event.messageType],
				["prompt", event.prompt],
			];
		case "context":
		case "context_with_system":
			return [["messages", roles(event.messages)]];
		case "tool_call":
			return [
				["toolName", event.toolName],
				["toolCallId", trace.call(event.toolCallId)],
				["input", event.input],
			];
		case "tool_result":
			return [
				["toolName", event.toolName],
				["toolCallId", trace.call(event.toolCallId)],
				["isError", event.isError],
				["text", blocksText(event.content)],
			];
		case "session_start":
		case "session_shutdown":
		case "resources_discover":
			return [
				["reason", event.reason],
				["previousSessionFile", scrubPaths(event.previousSessionFile)],
				["targetSessionFile", scrubPaths(event.targetSessionFile)],
			];
		case "session_before_switch":
			return [
				["reason", event.reason],
				["targetSessionFile", scrubPaths(event.targetSessionFile)],
			];
		case "session_before_fork":
			return [
				["entryId", trace.entry(event.entryId)],
				["position", event.position],
			];
		case "ui_prompt_start":
		case "ui_prompt_end":
			return [
				["kind", event.kind],
				["title", event.title],
			];
		// Recovery (scenarios/README.md): automatic compaction and retry, as session listeners and handlers see them.
		case "compaction_start":
			return [["reason", event.reason]];
		case "compaction_end":
			return [
				["reason", event.reason],
				["aborted", event.aborted],
				["willRetry", event.willRetry],
				["errorMessage", event.errorMessage],
				["summary", event.result?.summary],
				["firstKeptEntryId", trace.entry(event.result?.firstKeptEntryId)],
			];
		case "auto_retry_start":
			return [
				["attempt", event.attempt],
				["maxAttempts", event.maxAttempts],
				["delayMs", event.delayMs],
				["errorMessage", event.errorMessage],
			];
		case "auto_retry_end":
			return [
				["success", event.success],
				["attempt", event.attempt],
				["finalError", event.finalError],
			];
		case "session_before_compact":
			return [
				["reason", event.reason],
				["willRetry", event.willRetry],
				["customInstructions", event.customInstructions],
				["firstKeptEntryId", trace.entry(event.preparation?.firstKeptEntryId)],
				["messagesToSummarize", event.preparation?.messagesToSummarize?.length],
				["isSplitTurn", event.preparation?.isSplitTurn],
			];
		case "session_compact":
			return [
				["reason", event.reason],
				["willRetry", event.willRetry],
				["fromExtension", event.fromExtension],
				["entryId", trace.entry(event.compactionEntry?.id)],
				["summary", event.compactionEntry?.summary],
			];
		case "session_compact_failed":
			return [
				["reason", event.reason],
				["aborted", event.aborted],
				["willRetry", event.willRetry],
				["fromExtension", event.fromExtension],
				["errorMessage", event.errorMessage],
			];
		case "session_before_tree":
			return [
				["targetId", trace.entry(event.preparation?.targetId)],
				["oldLeafId", trace.entry(event.preparation?.oldLeafId)],
				["userWantsSummary", event.preparation?.userWantsSummary],
			];
		case "session_tree":
			return [
				["newLeafId", trace.entry(event.newLeafId)],
				["oldLeafId", trace.entry(event.oldLeafId)],
				["fromExtension", event.fromExtension],
			];
		case "thinking_level_changed":
			return [["level", event.level]];
		case "thinking_level_select":
			return [
				["level", event.level],
				["previousLevel", event.previousLevel],
			];
		// Extension API actions (scenario-format.md "Extension API actions"): a model change.
		case "model_select":
			return [
				["model", modelName(event.model)],
				["previousModel", modelName(event.previousModel)],
				["selectSource", event.source],
			];
		default:
			return [];
	}
}

function modelName(model) {
	return model ? `${model.provider}/${model.id}` : undefined;
}

// A deep copy that keeps JSON values only (what the handler saw on entry must not change when it mutates).
function snapshot(value) {
	return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

// ---------------------------------------------------------------------------------------------------------------
// Scenario defaults

const DEFAULT_PARAMETERS = {
	word_count: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
	simulated_bash: {
		type: "object",
		properties: { command: { type: "string" }, timeout: { type: "number" } },
		required: ["command"],
	},
};

function toolParameters(tool) {
	return tool.parameters ?? DEFAULT_PARAMETERS[tool.behavior.kind] ?? { type: "object", properties: {} };
}

function textResult(text, details, isError) {
	const result = { content: [{ type: "text", text }], details };
	if (isError) result.isError = true;
	return result;
}

function waitOrAbort(ms, signal, name) {
	return new Promise((resolvePromise, reject) => {
		if (signal?.aborted) {
			reject(new Error(`${name} aborted`));
			return;
		}
		const onAbort = () => {
			clearTimeout(timer);
			reject(new Error(`${name} aborted`));
		};
		const timer = setTimeout(() => {
			signal?.removeEventListener("abort", onAbort);
			resolvePromise();
		}, ms);
		signal?.addEventListener("abort", onAbort, { once: true });
	});
}

// pinb's extension: `terminate` on a result asks Pi to end the run after this batch (when every result in it does).
function terminating(result, fields) {
	if (fields.terminate !== undefined) result.terminate = fields.terminate;
	return result;
}

// execute() of a scenario tool. Never touches the host.
function makeExecute(tool) {
	const behavior = tool.behavior;
	switch (behavior.kind) {
		case "word_count":
			return async (_id, params) => {
				if (typeof params?.text !== "string") throw new Error("word_count: text must be a string");
				const n = params.text.trim().split(/\s+/).filter(Boolean).length;
				return { content: [{ type: "text", text: String(n) }], details: { words: n } };
			};
		case "return":
			return async () =>
				terminating(textResult(behavior.text ?? "", behavior.details ?? {}, behavior.isError === true), behavior);
		case "throw":
			return async () => {
				throw new Error(behavior.message);
			};
		case "sleep":
			return async (_id, _params, signal, onUpdate) => {
				if (signal?.aborted) throw new Error(`${tool.name} aborted`);
				for (const update of behavior.updates ?? []) {
					onUpdate?.({ content: [{ type: "text", text: update }], details: {} });
				}
				await waitOrAbort(behavior.ms, signal, tool.name);
				const then = behavior.then ?? {};
				return terminating(textResult(then.text ?? "", then.details ?? {}, then.isError === true), then);
			};
		case "simulated_bash":
			// Recorded, never run: the result follows Pi 1.6.0's bash tool for the scripted stdout and exit code.
			return async (_id, params) => {
				simulatedCommands.push(params?.command);
				const stdout = behavior.stdout ?? "";
				const exitCode = behavior.exitCode ?? 0;
				let text = stdout.length > 0 ? stdout : "(no output)";
				if (exitCode !== 0) {
					text += `\n\nCommand exited with code ${exitCode}`;
					return { content: [{ type: "text", text }], details: undefined, isError: true };
				}
				return { content: [{ type: "text", text }], details: undefined };
			};
		default:
			throw new Error(`unknown tool behavior: ${behavior.kind}`);
	}
}

const simulatedCommands = [];

function agentTools(scenario) {
	return (scenario.tools ?? []).map((tool) => {
		const agentTool = {
			name: tool.name,
			label: tool.name,
			description: tool.description ?? tool.name,
			parameters: toolParameters(tool),
			execute: makeExecute(tool),
		};
		if (tool.execution_mode) agentTool.executionMode = tool.execution_mode;
		// pinb's extension: the tool's lines in the default system prompt (layer app).
		if (tool.prompt_snippet !== undefined) agentTool.promptSnippet = tool.prompt_snippet;
		if (tool.prompt_guidelines !== undefined) agentTool.promptGuidelines = tool.prompt_guidelines;
		return agentTool;
	});
}

function scriptedResponses(ai, scenario) {
	return (scenario.responses ?? []).map((response, index) => {
		const content = (response.content ?? []).map((block, blockIndex) => {
			if (block.type === "text") return ai.fauxText(block.text);
			if (block.type === "thinking") return ai.fauxThinking(block.thinking);
			return ai.fauxToolCall(block.name, block.arguments ?? {}, {
				id: block.id ?? `scripted-${index + 1}-${blockIndex + 1}`,
			});
		});
		const options = { stopReason: response.stopReason ?? "stop", timestamp: 0 };
		if (response.errorMessage !== undefined) options.errorMessage = response.errorMessage;
		return ai.fauxAssistantMessage(content, options);
	});
}

function fauxOptions(scenario) {
	const stream = scenario.settings?.stream ?? {};
	const tokenSize = stream.token_size ?? 1000;
	const options = { tokenSize: { min: tokenSize, max: tokenSize } };
	if (stream.tokens_per_second !== undefined) options.tokensPerSecond = stream.tokens_per_second;
	return options;
}

// The faux model's limits (scenario `model`): Pi's faux defaults are a 128000-token window and 16384 output tokens.
function fauxModels(scenario) {
	const model = scenario.model ?? {};
	const fields = ["context_window", "max_tokens", "id", "reasoning", "others"];
	if (fields.every((field) => model[field] === undefined)) return {};
	const definition = { id: model.id ?? "faux-1", name: "Faux Model" };
	if (model.reasoning !== undefined) definition.reasoning = model.reasoning;
	if (model.context_window !== undefined) definition.contextWindow = model.context_window;
	if (model.max_tokens !== undefined) definition.maxTokens = model.max_tokens;
	return { models: [definition, ...otherModels(model)] };
}

// pinb's extension: `model.others`, the other models the faux provider serves (a `set_model` step or action picks one).
function otherModels(model) {
	return (model.others ?? []).map((other) =>
		defined({
			id: other.id,
			reasoning: other.reasoning,
			contextWindow: other.context_window,
			maxTokens: other.max_tokens,
		}),
	);
}

// Pi's compaction and retry settings (scenario `settings.compaction`, `settings.retry`); absent fields: Pi's defaults.
function recoverySettings(settings) {
	const out = {};
	const compaction = settings.compaction;
	if (compaction) {
		out.compaction = defined({
			enabled: compaction.enabled,
			reserveTokens: compaction.reserve_tokens,
			keepRecentTokens: compaction.keep_recent_tokens,
		});
	}
	const retry = settings.retry;
	if (retry) {
		out.retry = defined({ enabled: retry.enabled, maxRetries: retry.max_retries, baseDelayMs: retry.base_delay_ms });
	}
	return out;
}

// Tool names declared to the model: the system messages' toolsAdded/toolsRemoved folded in order.
function declaredTools(messages) {
	const tools = new Map();
	for (const message of messages) {
		if (message.role !== "system") continue;
		for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
		for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
	}
	return [...tools.keys()];
}

function modelMessage(message, trace) {
	switch (message.role) {
		case "user":
			return { role: "user", ...defined({ text: blocksText(message.content) }) };
		case "assistant":
			return {
				role: "assistant",
				...defined({ text: blocksText(message.content), toolCalls: toolCallsOf(message, trace) }),
			};
		case "toolResult":
			return {
				role: "toolResult",
				...defined({
					toolCallId: trace.call(message.toolCallId),
					isError: message.isError,
					text: blocksText(message.content),
				}),
			};
		default:
			return { role: message.role };
	}
}

function defined(object) {
	return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}

// A time strictly later than now (waits out the current millisecond).
function laterThanNow() {
	const start = Date.now();
	let now = start;
	while (now <= start) now = Date.now();
	return now;
}

// Wrap the faux provider so each request that reaches it writes one `model` line before its reply streams.
// With `script` (layer app), the reply a request takes is stamped when the request is made, strictly after
// everything before it, as a real provider's reply is: Pi compares reply and compaction times. `observe` (a
// scenario's observe.requests) writes a `request` line right after each `model` line.
function instrumentProvider(faux, trace, script, observe) {
	let requests = 0;
	for (const method of ["stream", "streamSimple"]) {
		const original = faux.provider[method];
		if (typeof original !== "function") continue;
		faux.provider[method] = (model, context, options) => {
			const pending = faux.getPendingResponseCount();
			const exhausted = pending === 0;
			if (script && !exhausted) script[script.length - pending].timestamp = laterThanNow();
			const messages = context?.messages ?? [];
			const tools = context?.tools ? context.tools.map((tool) => tool.name) : declaredTools(messages);
			requests += 1;
			const n = requests;
			trace.write("model", "request", (t) => [
				["n", n],
				["messages", messages.map((message) => modelMessage(message, t))],
				["tools", tools],
				["exhausted", exhausted ? true : undefined],
			]);
			observe?.(n, model, context, options);
			return original.call(faux.provider, model, context, options);
		};
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Queue triggers

function makeTriggers(scenario, trace) {
	const counts = new Map();
	// `when: "start"` fires once, on the driver's `fire("start", …)` before the first prompt.
	const triggers = (scenario.queue ?? []).map((trigger) => {
		const [type, n] = trigger.when.split("#");
		return { ...trigger, type, n: n === undefined ? 1 : Number(n) };
	});
	return async (eventType, target) => {
		const count = (counts.get(eventType) ?? 0) + 1;
		counts.set(eventType, count);
		for (const trigger of triggers) {
			if (trigger.type !== eventType || trigger.n !== count) continue;
			trace.write("driver", "queue", [
				["when", trigger.when],
				["do", trigger.do],
				["text", trigger.text],
				["streamingBehavior", trigger.streaming_behavior],
			]);
			try {
				await target(trigger);
			} catch (error) {
				trace.write("driver", "queue_rejected", [["error", errorText(error)]]);
			}
		}
	};
}

function errorText(error) {
	return error instanceof Error ? error.message : String(error);
}

function prompts(scenario) {
	return Array.isArray(scenario.prompt) ? scenario.prompt : [scenario.prompt];
}

// ---------------------------------------------------------------------------------------------------------------
// Agent-core hooks (pinb's extension of the scenario contract, scenarios/README.md): the Agent's prepareRequest,
// beforeToolCall and afterToolCall options, built from the declarative hook kinds. Pi 1.0.3 and 1.6.0 both take
// them as Agent constructor options with the same names and signatures.

function throwIfDue(hook, state) {
	state.invocations += 1;
	if (state.invocations === (hook.at ?? 1)) throw new Error(hook.message);
}

function agentHooks(scenario) {
	const hooks = scenario.hooks ?? {};
	const options = {};
	const prepare = hooks.prepare_request;
	if (prepare) {
		const state = { invocations: 0 };
		options.prepareRequest = async () => {
			if (prepare.kind === "throw") throwIfDue(prepare, state);
			return undefined;
		};
	}
	const before = hooks.before_tool_call;
	if (before) {
		const state = { invocations: 0 };
		options.beforeToolCall = async (context) => {
			switch (before.kind) {
				case "throw":
					throwIfDue(before, state);
					return undefined;
				case "mutate_args":
					// The validated arguments object: the one the tool's execute() is called with.
					if (context.args && typeof context.args === "object") Object.assign(context.args, before.set);
					return undefined;
				case "block":
					return before.reason === undefined ? { block: true } : { block: true, reason: before.reason };
				default:
					return undefined;
			}
		};
	}
	const after = hooks.after_tool_call;
	if (after) {
		const state = { invocations: 0 };
		options.afterToolCall = async (context) => {
			if (after.kind === "throw") {
				throwIfDue(after, state);
				return undefined;
			}
			if (after.kind !== "patch") return undefined;
			const patch = {};
			if (after.text !== undefined) {
				patch.content = [{ type: "text", text: fill(after.text, blocksText(context.result?.content) ?? "") }];
			}
			if (after.isError !== undefined) patch.isError = after.isError;
			if ("details" in after) patch.details = after.details;
			return patch;
		};
	}
	return options;
}

// ---------------------------------------------------------------------------------------------------------------
// Layer agent: an Agent over the faux provider, like chapter 01's program.

async function runAgentLayer(scenario, packages, trace) {
	const ai = await importPackage(packages, "pi-ai");
	const core = await importPackage(packages, "pi-agent-core");
	const faux = ai.fauxProvider(fauxOptions(scenario));
	// pinb's extension: observe.requests writes a `request` line (no branch: the core keeps no session).
	const { getCurrentSystemPrompt } = scenario.observe?.requests
		? await importInternal(packages, "pi-ai", "dist/utils/transcript.js")
		: {};
	const observe = scenario.observe?.requests
		? (n, model, context, options) =>
				trace.write("request", "inputs", [
					["n", n],
					["systemPrompt", scrubPaths(getCurrentSystemPrompt(context?.messages ?? []))],
					["model", `${model?.provider}/${model?.id}`],
					["thinkingLevel", options?.reasoning ?? "off"],
				])
		: undefined;
	instrumentProvider(faux, trace, undefined, observe);
	const models = ai.createModels();
	models.setProvider(faux.provider);
	faux.setResponses(scriptedResponses(ai, scenario));

	const settings = scenario.settings ?? {};
	const initialState = { model: faux.getModel(), tools: agentTools(scenario) };
	if (scenario.system_prompt !== undefined) initialState.systemPrompt = scenario.system_prompt;
	const agent = new core.Agent({
		initialState,
		streamFn: models.streamSimple.bind(models),
		toolExecution: settings.tool_execution ?? "parallel",
		steeringMode: settings.steering_mode ?? "one-at-a-time",
		followUpMode: settings.follow_up_mode ?? "one-at-a-time",
		...agentHooks(scenario),
	});

	const userMessage = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
	const fire = makeTriggers(scenario, trace);
	const act = async (trigger) => {
		if (trigger.do === "steer") agent.steer(userMessage(trigger.text));
		else if (trigger.do === "follow_up") agent.followUp(userMessage(trigger.text));
		else agent.abort();
	};
	agent.subscribe(async (event) => {
		trace.write("agent", event.type, (t) => eventFields(event, t, false), STREAM_TYPES.has(event.type));
		await fire(event.type, act);
	});

	// pinb's extension: a project laid out for the agent layer is only the run's working directory.
	const home = scenario.project ? mkdtempSync(join(tmpdir(), "pinb-agent-")) : undefined;
	const before = process.cwd();
	if (home) {
		const root = join(home, "project");
		layOutProject(scenario.project, root);
		process.chdir(scenario.project.cwd ? join(root, ...scenario.project.cwd.split("/")) : root);
	}
	try {
		await fire("start", act);
		for (const text of prompts(scenario)) {
			trace.write("driver", "prompt", [["text", text]]);
			try {
				await agent.prompt(text);
				trace.write("driver", "prompt_resolved");
			} catch (error) {
				trace.write("driver", "prompt_rejected", [["error", errorText(error)]]);
			}
		}
	} finally {
		if (home) {
			process.chdir(before);
			rmSync(home, { recursive: true, force: true });
		}
	}
	trace.write("driver", "dispose");
}

// ---------------------------------------------------------------------------------------------------------------
// Layer app: an agent session (pi-coding-agent) with inline extensions built from the declarative handlers.

// Tool-call and entry ids inside a line computed on entry stay raw until the line is written, so labels follow
// the order of lines in the trace.
function relabel(pairs, trace) {
	const labelCalls = (list, key) =>
		Array.isArray(list) ? list.map((item) => ({ ...item, [key]: trace.call(item[key]) })) : list;
	return pairs.map(([key, value]) => {
		if (key === "toolCallId") return [key, trace.call(value)];
		if (ENTRY_KEYS.has(key)) return [key, trace.entry(value)];
		if (key === "toolResults") return [key, labelCalls(value, "toolCallId")];
		if (key === "toolCalls") return [key, labelCalls(value, "id")];
		return [key, value];
	});
}

const RAW_IDS = { call: (id) => id, entry: (id) => id };
const ENTRY_KEYS = new Set(["entryId", "firstKeptEntryId", "targetId", "oldLeafId", "newLeafId"]);

function fill(template, text) {
	return template.split("{text}").join(text);
}

function handlerResult(result, trace) {
	if (result === undefined || result === null || typeof result !== "object") return result ?? undefined;
	if (typeof result.systemPrompt === "string") return snapshot({ ...result, systemPrompt: scrubPaths(result.systemPrompt) });
	if (Array.isArray(result.messages)) {
		return snapshot({ ...result, messages: result.messages.map((message) => summaryObject(message, trace)) });
	}
	if (result.compaction && typeof result.compaction === "object") {
		// A supplied compaction: its entry id is labelled; tokensBefore is an estimate and is not traced.
		const { tokensBefore: _tokens, ...compaction } = result.compaction;
		return snapshot({
			...result,
			compaction: { ...compaction, firstKeptEntryId: trace.entry(compaction.firstKeptEntryId) },
		});
	}
	if (result.message && typeof result.message === "object" && typeof result.message.role === "string") {
		return { ...result, message: summaryObject(result.message, trace) };
	}
	return snapshot(result);
}

function sleep(ms) {
	return new Promise((resolvePromise) => setTimeout(resolvePromise, ms));
}

// One handler's behaviour (scenario action kinds). `state` holds the handler's invocation count.
function makeAction(action, unsubscribers, state, pi) {
	switch (action.kind) {
		case "record":
			return async () => undefined;
		case "throw":
			return async () => {
				throw new Error(action.message);
			};
		case "sleep":
			return async () => {
				await sleep(action.ms);
				return undefined;
			};
		case "block_if_match":
			return async (event, ctx) => {
				if (!action.tool_names.includes(event.toolName)) return undefined;
				const subject =
					(action.match_on ?? "json_input") === "command"
						? String(event.input?.command ?? "")
						: JSON.stringify(event.input);
				const pattern = action.patterns.find((source) => new RegExp(source).test(subject));
				if (pattern === undefined) return undefined;
				if (action.confirm_with_ui && ctx.hasUI) {
					const allowed = await ctx.ui.confirm(
						action.confirm_title ?? "This command rewrites history or destroys work. Allow?",
						subject.slice(0, 200),
					);
					if (allowed) return undefined;
					return { block: true, reason: action.denied_reason ?? "Blocked by review-guard extension" };
				}
				return {
					block: true,
					reason: (action.reason_template ?? "Guard blocked: {pattern}").split("{pattern}").join(pattern),
				};
			};
		case "mutate_input":
			return async (event) => {
				Object.assign(event.input, action.set);
				return undefined;
			};
		case "replace_result":
			return async (event) => {
				const patch = {};
				if (action.text !== undefined) {
					patch.content = [{ type: "text", text: fill(action.text, blocksText(event.content) ?? "") }];
				}
				if (action.isError !== undefined) patch.isError = action.isError;
				if ("details" in action) patch.details = action.details;
				return patch;
			};
		case "transform_input":
			if (action.handled) return async () => ({ action: "handled" });
			return async (event) => ({ action: "transform", text: fill(action.text ?? "{text}", event.text ?? "") });
		case "inject_message":
			return async () => ({
				message: { customType: action.customType, content: action.content, display: action.display ?? true },
			});
		case "replace_message":
			return async (event) => {
				const message = event.message;
				if (!message || message.role !== (action.role ?? "assistant")) return undefined;
				const content =
					typeof message.content === "string"
						? fill(action.text, message.content)
						: message.content.map((block) =>
								block.type === "text" ? { ...block, text: fill(action.text, block.text) } : block,
							);
				return { message: { ...message, content, ...(action.as_role ? { role: action.as_role } : {}) } };
			};
		case "continue_once":
			return async (event) => {
				if (state.invocations !== (action.at ?? 1)) return undefined;
				return continueWith(action.entry, event);
			};
		case "unsubscribe":
			return async () => {
				if (state.invocations === 1) unsubscribers.get(action.target)?.();
				return undefined;
			};
		// pinb's application-layer actions (scenarios/README.md, reference/scenario-app.schema.json)
		case "return_value":
			return async () => snapshot(action.value);
		case "continue_times":
			return async (event) => {
				if (state.invocations > action.times) return undefined;
				return continueWith(action.entry, event);
			};
		case "trust":
			return async () => {
				const result = { trusted: action.trusted };
				if (action.remember !== undefined) result.remember = action.remember;
				return result;
			};
		case "cancel_compaction":
			return async () => ({ cancel: true });
		case "append_system_prompt":
			return async (event) =>
				state.invocations === (action.at ?? 1) ? { systemPrompt: `${event.systemPrompt}${action.text}` } : undefined;
		case "set_active_tools":
			return async () => {
				if (state.invocations === (action.at ?? 1)) pi.setActiveTools(action.tools);
				return undefined;
			};
		case "set_thinking_level":
			return async () => {
				if (state.invocations === (action.at ?? 1)) pi.setThinkingLevel(action.level);
				return undefined;
			};
		case "append_entry":
		case "send_message":
		case "send_user_message":
		case "set_model":
			return apiAction(action, state, pi);
		case "drop_messages":
			return async (event) => ({
				messages: event.messages.filter((message) => blocksText(message.content) !== action.text),
			});
		case "supply_summary":
			return async (event) => ({
				compaction: {
					summary: action.summary,
					firstKeptEntryId: event.preparation.firstKeptEntryId,
					tokensBefore: event.preparation.tokensBefore,
				},
			});
		default:
			throw new Error(`unknown action kind: ${action.kind}`);
	}
}

// Extension API actions (scenario-format.md "Extension API actions"): on the `at`-th invocation the handler (or
// command) calls one `pi` method, as an extension's code would; it returns nothing. In a command, `{args}` in a
// text is the command's arguments.
function apiAction(action, state, pi) {
	const due = () => state.invocations === (action.at ?? 1);
	const withArgs = (text, args) => (args === undefined ? text : text.split("{args}").join(args));
	switch (action.kind) {
		case "append_entry":
			return async () => {
				if (due()) pi.appendEntry(action.customType, action.data);
				return undefined;
			};
		case "send_message":
			return async (_event, _ctx, args) => {
				if (!due()) return undefined;
				const message = { customType: action.customType, content: withArgs(action.content, args), display: action.display ?? true };
				if ("details" in action) message.details = action.details;
				const options = defined({ triggerTurn: action.triggerTurn, deliverAs: action.deliverAs });
				pi.sendMessage(message, Object.keys(options).length ? options : undefined);
				return undefined;
			};
		case "send_user_message":
			return async (_event, _ctx, args) => {
				if (!due()) return undefined;
				const options = defined({ deliverAs: action.deliverAs, expandPromptTemplates: action.expandPromptTemplates });
				pi.sendUserMessage(withArgs(action.text, args), Object.keys(options).length ? options : undefined);
				return undefined;
			};
		case "set_model":
			return async (_event, ctx) => {
				if (!due()) return undefined;
				// As an extension finds a model: in the session's registry (the faux provider serves `model.others`).
				const model = ctx.modelRegistry.find("faux", action.model);
				if (!model) throw new Error(`no model faux/${action.model}`);
				await pi.setModel(model);
				return undefined;
			};
		default:
			throw new Error(`unknown action kind: ${action.kind}`);
	}
}

// An extension given as `source` (a module whose default export is the extension factory, as a book prints it) is
// written to a file in the run's folder and imported by Node (which strips TypeScript types itself). Its `pi.on`
// registrations are traced like the declarative handlers: the n-th registration takes the n-th handler's label.
async function loadSourceExtensions(scenario, folder) {
	const loaded = new Map();
	for (const extension of scenario.extensions ?? []) {
		if (typeof extension.source !== "string") continue;
		const dir = join(folder, "extensions");
		mkdirSync(dir, { recursive: true });
		const file = join(dir, `${extension.name.replace(/[^A-Za-z0-9_-]/g, "_")}.ts`);
		writeFileSync(file, extension.source);
		const module = await import(pathToFileURL(file).href);
		if (typeof module.default !== "function") throw new Error(`extension ${extension.name}: its source has no default export`);
		loaded.set(extension.name, module.default);
	}
	return loaded;
}

function sourceDigests(scenario) {
	return (scenario.extensions ?? [])
		.filter((extension) => typeof extension.source === "string")
		.map((extension) => ({ name: extension.name, sha256: createHash("sha256").update(extension.source).digest("hex") }));
}

function tracedHandler(extensionName, label, act, trace) {
	return async (event, ctx) => {
		const onEntry = snapshot(Object.fromEntries(eventFields(event, RAW_IDS, true)));
		const pairs = Object.entries(onEntry);
		const head = [
			["extension", extensionName],
			["handler", label],
		];
		try {
			const result = await act(event, ctx);
			trace.write("ext", event.type, (t) => [...head, ...relabel(pairs, t), ["result", handlerResult(result, t)]],
				STREAM_TYPES.has(event.type));
			return result;
		} catch (error) {
			trace.write("ext", event.type, (t) => [...head, ...relabel(pairs, t), ["error", errorText(error)]],
				STREAM_TYPES.has(event.type));
			throw error;
		}
	};
}

function inlineExtensions(scenario, trace, sources = new Map()) {
	const unsubscribers = new Map();
	return (scenario.extensions ?? []).map((extension) => ({
		name: extension.name,
		factory: (pi) => {
			const fromSource = sources.get(extension.name);
			if (fromSource !== undefined) {
				let n = 0;
				const traced = new Proxy(pi, {
					get(target, property, receiver) {
						if (property === "registerCommand") {
							// Commands are traced like declared ones (`ext` line `command`).
							return (name, options) =>
								target.registerCommand(
									name,
									typeof options?.handler === "function"
										? { ...options, handler: tracedCommand(extension.name, name, options.handler, trace) }
										: options,
								);
						}
						if (property !== "on") return Reflect.get(target, property, receiver);
						return (event, handler) => {
							const label = extension.handlers[n]?.label;
							n += 1;
							return target.on(event, tracedHandler(extension.name, label, handler, trace));
						};
					},
				});
				return fromSource(traced);
			}
			for (const handler of extension.handlers) {
				const state = { invocations: 0 };
				// With `occurrences` the action acts on each listed occurrence as on its `at`-th invocation.
				const actState = handler.occurrences === undefined ? state : { invocations: 0 };
				const act = makeAction(handler.action, unsubscribers, actState, pi);
				const head = [
					["extension", extension.name],
					["handler", handler.label],
				];
				const registered = async (event, ctx) => {
					state.invocations += 1;
					const onEntry = snapshot(Object.fromEntries(eventFields(event, RAW_IDS, true)));
					const pairs = Object.entries(onEntry);
					try {
						// pinb's extension: `occurrences` limits the action to those invocations (others return nothing).
						const due = handler.occurrences === undefined || handler.occurrences.includes(state.invocations);
						if (due && actState !== state) actState.invocations = handler.action.at ?? 1;
						const result = due ? await act(event, ctx) : undefined;
						trace.write("ext", event.type, (t) => [
							...head,
							...relabel(pairs, t),
							["result", handlerResult(result, t)],
						], STREAM_TYPES.has(event.type));
						return result;
					} catch (error) {
						trace.write("ext", event.type, (t) => [...head, ...relabel(pairs, t), ["error", errorText(error)]],
							STREAM_TYPES.has(event.type));
						throw error;
					}
				};
				const unsubscribe = pi.on(handler.event, registered);
				if (handler.label) unsubscribers.set(handler.label, unsubscribe);
			}
			for (const command of extension.commands ?? []) registerCommand(pi, extension.name, command, trace);
		},
	}));
}

// pinb's extension: `extensions[].commands[]`, each one `pi.registerCommand(name, {description, handler})` whose
// handler performs its action and writes one `ext` line `command` {extension, command, args, result | error}.
function registerCommand(pi, extensionName, command, trace) {
	const state = { invocations: 0 };
	const act = makeAction(command.action, new Map(), state, pi);
	// Returns the action's own promise, so the line is written as soon as the action settles.
	const run = (args, ctx) => {
		state.invocations += 1;
		return act({}, ctx, args);
	};
	const options = { handler: tracedCommand(extensionName, command.name, run, trace) };
	if (command.description !== undefined) options.description = command.description;
	pi.registerCommand(command.name, options);
}

// A command handler that writes one `ext` line `command` when it returns or throws.
function tracedCommand(extensionName, name, handler, trace) {
	return async (args, ctx) => {
		const head = [
			["extension", extensionName],
			["command", name],
			["args", args],
		];
		try {
			const result = await handler(args, ctx);
			trace.write("ext", "command", (t) => [...head, ["result", handlerResult(result, t)]]);
			return result;
		} catch (error) {
			trace.write("ext", "command", [...head, ["error", errorText(error)]]);
			throw error;
		}
	};
}

// A boundary handler's continuation: `continue: true`, with the scenario's entry appended to the proposed ones.
function continueWith(entry, event) {
	if (!entry) return { continue: true };
	const message = {
		type: "custom_message",
		customType: entry.customType,
		content: entry.content,
		display: entry.display ?? false,
	};
	return { entries: [...(event.entries ?? []), message], continue: true };
}

// The scripted person: each dialog answers from the scenario and is recorded as a `driver` `ui` line saying what
// the dialog was asked (Pi's ui_prompt_start event carries the title only, never the message).
function scriptedUI(confirmAnswer, trace) {
	const asked = (kind, title, message, answer) => {
		trace.write("driver", "ui", [
			["kind", kind],
			["title", title],
			["message", message],
			["answer", answer],
		]);
		return answer;
	};
	return {
		select: async (title) => asked("select", title, undefined, undefined),
		confirm: async (title, message) => asked("confirm", title, message, confirmAnswer),
		input: async (title, placeholder) => asked("input", title, placeholder, undefined),
		notify: () => {},
		onTerminalInput: () => () => {},
		setStatus: () => {},
		setWorkingMessage: () => {},
		setWorkingVisible: () => {},
		setWorkingIndicator: () => {},
		setHiddenThinkingLabel: () => {},
		setWidget: () => {},
		setFooter: () => {},
		setHeader: () => {},
		setTitle: () => {},
		custom: async () => undefined,
		pasteToEditor: () => {},
		setEditorText: () => {},
		getEditorText: () => "",
		editor: async (title, prefill) => asked("editor", title, prefill, undefined),
		addAutocompleteProvider: () => {},
		setEditorComponent: () => {},
		getEditorComponent: () => undefined,
		getAllThemes: () => [],
		getTheme: () => undefined,
		setTheme: () => ({ success: false, error: "UI not available" }),
		getToolsExpanded: () => false,
		setToolsExpanded: () => {},
	};
}

function extensionName(path) {
	const match = /^<inline:(.*)>$/.exec(String(path));
	return match ? match[1] : path;
}

// Pi names an inline extension `<inline:NAME>` in its messages; like `extension_error`, traces give the scenario's NAME.
function namedExtensions(message) {
	return String(message).replace(/Extension "<inline:([^"]*)>"/g, 'Extension "$1"');
}

// ---------------------------------------------------------------------------------------------------------------
// pinb's application-layer extension (scenarios/README.md, reference/scenario-app.schema.json): a project folder,
// session steps, model settings, and `request` / `tree` lines that show what a request was built from.

// Lay the scenario's project out under `root` (relative POSIX paths only; the model checks them too).
function layOutProject(project, root) {
	for (const [relative, text] of Object.entries(project?.files ?? {})) {
		if (relative.startsWith("/") || relative.split("/").includes("..")) {
			throw new Error(`project file ${relative}: paths are relative and stay inside the project`);
		}
		const path = join(root, ...relative.split("/"));
		mkdirSync(dirname(path), { recursive: true });
		writeFileSync(path, text);
	}
}

// Machine paths never reach a trace: the temporary home becomes <home>, Pi's package folder <pi>.
let scrubPaths = (text) => text;

function pathScrubber(pairs) {
	const sorted = pairs.filter(([from]) => from).sort((a, b) => b[0].length - a[0].length);
	return (text) => {
		if (typeof text !== "string") return text;
		let out = text;
		for (const [from, to] of sorted) out = out.split(from).join(to);
		return out;
	};
}

function entrySummary(manager, entry, trace) {
	const fields = [
		["id", trace.entry(entry.id)],
		["parentId", entry.parentId === null ? undefined : trace.entry(entry.parentId)],
		["type", entry.type],
	];
	switch (entry.type) {
		case "message":
			fields.push(["role", entry.message?.role]);
			if (entry.message?.role !== "system") fields.push(["text", blocksText(entry.message?.content)]);
			break;
		case "custom_message":
			fields.push(["customType", entry.customType], ["text", blocksText(entry.content)]);
			break;
		case "compaction":
			fields.push(["summary", entry.summary], ["firstKeptEntryId", trace.entry(entry.firstKeptEntryId)]);
			break;
		case "branch_summary":
			fields.push(["summary", entry.summary]);
			break;
		case "label":
			fields.push(["targetId", trace.entry(entry.targetId)], ["label", entry.label]);
			break;
		case "context_edit":
			fields.push(["targetId", trace.entry(entry.targetId)]);
			break;
		case "thinking_level_change":
			fields.push(["thinkingLevel", entry.thinkingLevel]);
			break;
		case "model_change":
			fields.push(["provider", entry.provider], ["modelId", entry.modelId]);
			break;
		case "custom":
			// An extension's appendEntry: its customType and data (never sent to the model).
			fields.push(["customType", entry.customType], ["data", snapshot(entry.data ?? undefined)]);
			break;
		default:
			break;
	}
	if (entry.type !== "label") fields.push(["label", manager.getLabel(entry.id)]);
	return defined(Object.fromEntries(fields));
}

// The target `{type, nth}`: the nth entry (append order, from 1) of that type, whatever the type.
function findEntryOfType(manager, target) {
	const nth = target.nth ?? 1;
	const found = manager.getEntries().filter((entry) => entry.type === target.type);
	if (found.length < nth) throw new Error(`no ${target.type} entry number ${nth} (the session has ${found.length})`);
	return found[nth - 1];
}

// A step's target as its `step` line writes it (`nth` spelled out, as the scenario model reads it).
function stepTarget(target) {
	return target?.type === undefined ? target : { type: target.type, nth: target.nth ?? 1 };
}

// The first message entry (append order) with the target's role and text; or, for `{type, nth}`, findEntryOfType.
function findEntry(manager, target) {
	if (target.type !== undefined) return findEntryOfType(manager, target);
	const found = manager
		.getEntries()
		.find(
			(entry) =>
				entry.type === "message" &&
				entry.message?.role === target.role &&
				blocksText(entry.message?.content) === target.text,
		);
	if (!found) throw new Error(`no ${target.role} message entry with text ${JSON.stringify(target.text)}`);
	return found;
}

async function importInternal(packages, name, relative) {
	return import(pathToFileURL(join(packageDir(packages, name), relative)).href);
}

function projectTrustContext(cwd) {
	return {
		cwd,
		mode: "print",
		hasUI: false,
		ui: { select: async () => undefined, confirm: async () => false, input: async () => undefined, notify: () => {} },
	};
}

async function runStep(step, session, trace, context) {
	const manager = session.sessionManager;
	switch (step.do) {
		case "prompt":
			await session.prompt(step.text);
			return [];
		case "branch":
			manager.branch(findEntry(manager, step.target).id);
			return [];
		case "navigate": {
			const result = await session.navigateTree(findEntry(manager, step.target).id, {
				summarize: step.summarize ?? false,
				customInstructions: step.instructions,
				replaceInstructions: step.replace_instructions,
				label: step.label,
			});
			return [
				["cancelled", result.cancelled],
				["editorText", result.editorText],
				["aborted", result.aborted],
			];
		}
		case "label":
			manager.appendLabelChange(findEntry(manager, step.target).id, step.label);
			return [];
		case "compact": {
			const result = await session.compact(step.instructions);
			return [
				["summary", result.summary],
				["firstKeptEntryId", trace.entry(result.firstKeptEntryId)],
			];
		}
		case "set_thinking_level":
			session.setThinkingLevel(step.level);
			return [["thinkingLevel", session.thinkingLevel]];
		case "reload":
			await session.reload();
			return [];
		case "new_session": {
			const result = await context.runtime.newSession();
			return [["cancelled", result.cancelled]];
		}
		case "fork": {
			const options = step.position ? { position: step.position } : undefined;
			const result = await context.runtime.fork(findEntry(manager, step.target).id, options);
			return [
				["cancelled", result.cancelled],
				["selectedText", result.selectedText],
			];
		}
		case "resume": {
			// The session file the scenario laid out in its project; its recorded cwd is replaced by the run's.
			if (step.path.startsWith("/") || step.path.split("/").includes("..")) {
				throw new Error(`resume path ${step.path}: paths are relative and stay inside the project`);
			}
			const path = join(context.root, ...step.path.split("/"));
			const result = await context.runtime.switchSession(path, { cwdOverride: session.sessionManager.getCwd() });
			return [["cancelled", result.cancelled]];
		}
		// Extension API items (scenario-format.md): a model change and an extension command.
		case "set_model": {
			const model = session.modelRuntime.getModel("faux", step.model);
			if (!model) throw new Error(`no model faux/${step.model}`);
			await session.setModel(model);
			return [
				["model", modelName(session.model)],
				["thinkingLevel", session.thinkingLevel],
			];
		}
		case "command":
			await session.prompt(step.text);
			// A run the command started (sendMessage with triggerTurn, sendUserMessage) belongs to the step: once
			// the microtasks it queued have run, wait until the session is idle again.
			await new Promise((resolvePromise) => setImmediate(resolvePromise));
			await session.waitForIdle();
			return [];
		case "snapshot": {
			const leaf = manager.getLeafId();
			trace.write("tree", "snapshot", (t) => [
				["entries", manager.getEntries().map((entry) => entrySummary(manager, entry, t))],
				["leaf", leaf === null ? undefined : t.entry(leaf)],
				["branch", manager.getBranch().map((entry) => t.entry(entry.id))],
			]);
			return [];
		}
		case "shutdown":
			// What Pi's runtime does on exit (AgentSessionRuntime.dispose): abort, then session_shutdown "quit".
			await session.abort();
			await context.emitSessionShutdownEvent(session.extensionRunner, { type: "session_shutdown", reason: "quit" });
			context.shutDown = true;
			return [];
		default:
			throw new Error(`unknown step: ${step.do}`);
	}
}

async function runAppLayer(scenario, packages, trace) {
	const ai = await importPackage(packages, "pi-ai");
	const app = await importPackage(packages, "pi-coding-agent");
	// Everything the session could read or write lives in a throw-away folder: no user settings, no
	// credentials, no context files but the scenario's, no network model refresh.
	const home = realpathSync(mkdtempSync(join(tmpdir(), "pinb-pi-")));
	const root = join(home, "project");
	const project = scenario.project;
	const cwd = project?.cwd ? join(root, ...project.cwd.split("/")) : root;
	const agentDir = join(home, ".pi", "agent");
	mkdirSync(cwd, { recursive: true });
	mkdirSync(agentDir, { recursive: true });
	layOutProject(project, root);
	// pinb's extension: files in the user's agent directory (a global AGENTS.md, SYSTEM.md, APPEND_SYSTEM.md, …).
	layOutProject({ files: project?.agent_files }, agentDir);
	process.env.HOME = home;
	process.env.PI_CODING_AGENT_DIR = agentDir;
	process.env.PI_OFFLINE = "1";
	process.env.PI_TELEMETRY = "0";
	const piDir = packageDir(packages, "pi-coding-agent");
	const scrub = pathScrubber([
		[home, "<home>"],
		[piDir, "<pi>"],
		[existsSync(piDir) ? realpathSync(piDir) : undefined, "<pi>"],
	]);
	scrubPaths = scrub;
	try {
		const faux = ai.fauxProvider({ ...fauxOptions(scenario), ...fauxModels(scenario) });
		let session;
		const { getCurrentSystemPrompt } = scenario.observe?.requests
			? await importInternal(packages, "pi-ai", "dist/utils/transcript.js")
			: {};
		const observe = scenario.observe?.requests
			? (n, model, context, options) => {
					const manager = session?.sessionManager;
					trace.write("request", "inputs", (t) => [
						["n", n],
						["systemPrompt", scrub(getCurrentSystemPrompt(context?.messages ?? []))],
						["model", `${model?.provider}/${model?.id}`],
						["thinkingLevel", options?.reasoning ?? "off"],
						["branch", manager ? manager.getBranch().map((entry) => entrySummary(manager, entry, t)) : undefined],
					]);
				}
			: undefined;
		const script = scriptedResponses(ai, scenario);
		instrumentProvider(faux, trace, script, observe);
		faux.setResponses(script);
		const modelRuntime = await app.ModelRuntime.create({
			authPath: join(agentDir, "auth.json"),
			modelsPath: null,
			refreshOnCreate: false,
		});
		modelRuntime.registerNativeProvider(faux.provider);
		// As Pi's own start-up does, wait for the provider's availability check: without it the runtime does not yet
		// count the faux provider as configured, and an extension's pi.setModel() resolves false.
		await modelRuntime.refresh({ allowNetwork: false });

		const settings = scenario.settings ?? {};
		const trust = project ? (project.trust ?? "trusted") : undefined;
		const settingsManager = app.SettingsManager.inMemory(
			{
				cacheWarming: "off",
				enableInstallTelemetry: false,
				steeringMode: settings.steering_mode ?? "one-at-a-time",
				followUpMode: settings.follow_up_mode ?? "one-at-a-time",
				...recoverySettings(settings),
			},
			trust === undefined ? undefined : { projectTrusted: trust === "trusted" },
		);
		const loaderOptions = {
			cwd,
			agentDir,
			settingsManager,
			extensionFactories: inlineExtensions(scenario, trace, await loadSourceExtensions(scenario, home)),
			noExtensions: true,
			noSkills: !project,
			noPromptTemplates: !project,
			noThemes: true,
			noContextFiles: !project,
		};
		if (scenario.system_prompt !== undefined) loaderOptions.systemPrompt = scenario.system_prompt;
		// A resource loader runs the extension factories on reload(); each session (the first, and each one a
		// new_session, fork or resume step makes) gets its own, as Pi's runtime gives each its own services.
		const makeResourceLoader = async () => {
			const resourceLoader = new app.DefaultResourceLoader(loaderOptions);
			if (trust === "ask") {
				// What Pi's main does for a project with trust-requiring resources and no stored decision: the
				// project_trust handlers decide (first yes/no wins), else the default ("ask": untrusted without a UI).
				const { resolveProjectTrusted } = await importInternal(packages, "pi-coding-agent", "dist/core/project-trust.js");
				await resourceLoader.reload({
					resolveProjectTrust: async ({ extensionsResult }) =>
						resolveProjectTrusted({
							cwd,
							trustStore: new app.ProjectTrustStore(agentDir),
							extensionsResult,
							projectTrustContext: projectTrustContext(cwd),
							onExtensionError: (message) =>
								trace.write("error", "project_trust_error", [["error", namedExtensions(message)]]),
						}),
				});
			} else {
				await resourceLoader.reload();
			}
			return resourceLoader;
		};
		const resourceLoader = await makeResourceLoader();

		const tools = agentTools(scenario);
		const ui = scenario.ui ?? {};
		const fire = makeTriggers(scenario, trace);
		const act = async (trigger) => {
			if (trigger.do === "steer") await session.steer(trigger.text);
			else if (trigger.do === "follow_up") await session.followUp(trigger.text);
			else if (trigger.do === "prompt") {
				const options = trigger.streaming_behavior ? { streamingBehavior: trigger.streaming_behavior } : undefined;
				await session.prompt(trigger.text, options);
			} else void session.abort();
		};
		// One session built, bound and traced; `sessionStartEvent` is the runtime's for a replacement session.
		const startSession = async (loader, sessionManager, sessionStartEvent) => {
			const { session: created } = await app.createAgentSession({
				cwd,
				agentDir,
				model: faux.getModel(),
				thinkingLevel: scenario.model?.thinking_level ?? "off",
				modelRuntime,
				resourceLoader: loader,
				settingsManager,
				sessionManager,
				tools: tools.map((tool) => tool.name),
				customTools: tools,
				...(sessionStartEvent ? { sessionStartEvent } : {}),
			});
			session = created;
			created.agent.toolExecution = settings.tool_execution ?? "parallel";
			await created.bindExtensions({
				...(ui.has_ui ? { uiContext: scriptedUI(ui.confirm === true, trace) } : {}),
				onError: (error) => {
					trace.write("error", "extension_error", [
						["extension", extensionName(error.extensionPath)],
						["event", error.event],
						["error", error.error],
					]);
				},
			});
			created.subscribe((event) => {
				trace.write("session", event.type, (t) => eventFields(event, t, false), STREAM_TYPES.has(event.type));
				void fire(event.type, act);
			});
			return created;
		};
		await startSession(resourceLoader, app.SessionManager.inMemory(cwd));

		// Queued before the first prompt (`when: "start"`): each action runs to its end first.
		await fire("start", act);
		for (const text of prompts(scenario)) {
			trace.write("driver", "prompt", [["text", text]]);
			try {
				await session.prompt(text);
				trace.write("driver", "prompt_resolved");
			} catch (error) {
				trace.write("driver", "prompt_rejected", [["error", errorText(error)]]);
			}
		}
		// Session replacement (new_session, fork, resume steps) goes through Pi's AgentSessionRuntime, whose
		// createRuntime builds the next session as the first one was built.
		const runtime = new app.AgentSessionRuntime(session, { cwd, agentDir }, async (options) => {
			const created = await startSession(await makeResourceLoader(), options.sessionManager, options.sessionStartEvent);
			return { session: created, services: { cwd: options.cwd, agentDir: options.agentDir }, diagnostics: [] };
		});
		const context = { shutDown: false, runtime, root };
		if (scenario.steps?.some((step) => step.do === "shutdown")) {
			({ emitSessionShutdownEvent: context.emitSessionShutdownEvent } = await importInternal(
				packages,
				"pi-coding-agent",
				"dist/core/extensions/runner.js",
			));
		}
		for (const step of scenario.steps ?? []) {
			await session.waitForIdle();
			trace.write("driver", "step", (t) => [
				["do", step.do],
				["text", step.text],
				["target", stepTarget(step.target)],
				["label", step.label],
				["instructions", step.instructions],
				["level", step.level],
				["summarize", step.summarize],
				["replace_instructions", step.replace_instructions],
				["position", step.position],
				["path", step.path],
				["model", step.model],
			]);
			try {
				const fields = await runStep(step, session, trace, context);
				trace.write("driver", "step_resolved", (t) => fields);
			} catch (error) {
				trace.write("driver", "step_rejected", [["error", scrub(errorText(error))]]);
			}
		}
		if (!context.shutDown) await session.waitForIdle();
		trace.write("driver", "dispose");
		session.dispose();
	} finally {
		rmSync(home, { recursive: true, force: true });
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Main

const APP_PACKAGES = ["pi-agent-core", "pi-ai", "pi-coding-agent", "pi-schema"];

// Run one parsed scenario on the package set in `packages`, handing each trace line to `out`. The runner's own
// per-run state is reset first, so a process can run many scenarios one after another.
export async function runScenario(scenario, packages, out) {
	scrubPaths = (text) => text;
	simulatedCommands.length = 0;
	const trace = new Trace(out);
	const versions = {};
	for (const name of APP_PACKAGES) {
		const version = packageVersion(packages, name);
		if (version) versions[`@earendil-works/${name}`] = version;
	}
	const coreVersion = versions["@earendil-works/pi-agent-core"];
	if (!coreVersion) throw new Error(`@earendil-works/pi-agent-core is not installed in ${packages}`);
	if (scenario.layer === "app" && !versions["@earendil-works/pi-coding-agent"]) {
		throw new Error(
			`layer app needs @earendil-works/pi-coding-agent, which is not installed for Pi ${coreVersion}` +
				(coreVersion === "1.0.3"
					? " (pi-coding-agent 1.0.3 cannot be installed: its dependency @earendil-works/chord@^1.0.3 was not on the npm registry as of 2026-11-30)"
					: ""),
		);
	}
	if (scenario.layer !== "agent" && scenario.hooks !== undefined) {
		throw new Error("hooks need layer agent");
	}
	trace.write("meta", "scenario", [
		["id", scenario.id],
		["layer", scenario.layer],
		["backend", `pi@${coreVersion}`],
		["versions", versions],
		["node", process.version],
		["extensionSources", sourceDigests(scenario).length ? sourceDigests(scenario) : undefined],
	]);
	if (scenario.layer === "agent") {
		await runAgentLayer(scenario, packages, trace);
	} else if (scenario.layer === "app") {
		await runAppLayer(scenario, packages, trace);
	} else {
		throw new Error(`unknown layer: ${scenario.layer}`);
	}
}

async function main() {
	const { packages, scenarioPath } = parseArgs(process.argv.slice(2));
	const scenario = JSON.parse(readFileSync(scenarioPath, "utf8"));
	await runScenario(scenario, packages, (text) => process.stdout.write(text));
}

const invokedAsScript = process.argv[1] !== undefined && realpathSync(resolve(process.argv[1])) === realpathSync(fileURLToPath(import.meta.url));

if (invokedAsScript) main().then(
	() => process.exit(0),
	(error) => {
		process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
		process.exit(1);
	},
);
