// Writes a session file with real Pi's SessionManager and the contexts Pi builds from it.
// Usage: node make_pi_session.mjs <pi-coding-agent dist/index.js> <output dir>
// Regenerates pi-session.jsonl and pi-session-contexts.json (the fixtures of test_session_file_golden.py).
import { mkdtempSync, readdirSync, copyFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [indexPath, outDir] = process.argv.slice(2);
const pi = await import(pathToFileURL(indexPath).href);
const { SessionManager, buildSessionContext, buildContextEntries } = pi;

const work = mkdtempSync(join(tmpdir(), "pinb-golden-"));
const sm = SessionManager.create("/project", work);
let t = 1767225600000; // 2026-01-01T00:00:00.000Z; message timestamps only (entry timestamps are Pi's clock)
const ts = () => (t += 1000);
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (content, stopReason = "stop") => ({ role: "assistant", content, api: "faux", provider: "faux", model: "faux-1", usage, stopReason, timestamp: ts() });
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: ts() });

const ids = {};
ids.model = sm.appendModelChange("faux", "faux-1");
ids.thinking = sm.appendThinkingLevelChange("low");
ids.system = sm.appendMessage({ role: "system", content: "", sections: { preamble: "You are a test.", cwd: "<cwd>\n/project\n</cwd>" }, toolsAdded: [{ name: "read", description: "Read file contents", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }], timestamp: ts() });
ids.u1 = sm.appendMessage(user("List the files, then read README.md"));
ids.a1 = sm.appendMessage(assistant([{ type: "text", text: "Reading it." }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "README.md" } }], "toolUse"));
ids.t1 = sm.appendMessage({ role: "toolResult", toolCallId: "call_1", toolName: "read", content: [{ type: "text", text: "# Demo\ncafé ☕\ttab" }], isError: false, timestamp: ts() });
ids.a2 = sm.appendMessage(assistant([{ type: "thinking", thinking: "short" }, { type: "text", text: "The README says Demo." }]));
ids.custom = sm.appendCustomEntry("review-guard", { armed: true, count: 2 });
ids.cmsg = sm.appendCustomMessageEntry("note", "A note for the model", true, { source: "test" });
ids.label = sm.appendLabelChange(ids.u1, "start");
ids.u2 = sm.appendMessage(user("Second question"));
ids.a3 = sm.appendMessage(assistant([{ type: "text", text: "Second answer" }]));
ids.c1 = sm.appendCompaction("Summary one: the user read README.md.", ids.u2, 1234, { readFiles: ["README.md"] });
ids.u3 = sm.appendMessage(user("Third question"));
ids.a4 = sm.appendMessage(assistant([{ type: "text", text: "Third answer" }]));
ids.c2 = sm.appendCompaction("Summary two: three questions so far.", ids.u3, 2345);
ids.u4 = sm.appendMessage(user("Fourth question"));
ids.edit1 = sm.appendContextEdit(ids.u4, { content: "Fourth question, edited" });
ids.edit2 = sm.appendContextEdit(ids.a4, { content: "Third answer, shortened" });
ids.info = sm.appendSessionInfo("golden\nsession");
ids.mainLeaf = sm.getLeafId();
ids.bs = sm.branchWithSummary(ids.a2, "Branch summary: tried compaction, came back.", { files: [] }, true);
ids.u5 = sm.appendMessage(user("On the branch"));
ids.a5 = sm.appendMessage(assistant([{ type: "text", text: "Branch answer" }]));
ids.unlabel = sm.appendLabelChange(ids.u1, undefined);

const entries = sm.getEntries();
const leaves = { a2: ids.a2, a3: ids.a3, c1: ids.c1, u3: ids.u3, mainLeaf: ids.mainLeaf, a5: ids.a5, system: ids.system };
const contexts = {};
for (const [name, leafId] of Object.entries(leaves)) {
  contexts[name] = {
    leafId,
    context: buildSessionContext(entries, leafId),
    contextEntryIds: buildContextEntries(entries, leafId).map((e) => e.id),
    llm: pi.convertToLlm(buildSessionContext(entries, leafId).messages),
  };
}
contexts.null = { leafId: null, context: buildSessionContext(entries, null), contextEntryIds: [], llm: [] };
const tree = (nodes) => nodes.map((n) => ({ id: n.entry.id, label: n.label ?? null, children: tree(n.children) }));
const file = readdirSync(work).find((f) => f.endsWith(".jsonl"));
copyFileSync(join(work, file), join(outDir, "pi-session.jsonl"));
writeFileSync(join(outDir, "pi-session-contexts.json"), `${JSON.stringify({ ids, contexts, tree: tree(sm.getTree()), branch: sm.getBranch().map((e) => e.id), leafId: sm.getLeafId(), sessionName: sm.getSessionName() }, null, 2)}\n`);
rmSync(work, { recursive: true });
