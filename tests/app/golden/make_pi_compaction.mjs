// Writes a session with real Pi and records Pi's prepareCompaction for several leaves and budgets.
// Usage: node make_pi_compaction.mjs <pi-coding-agent dir> <output dir>
// Outputs pi-compaction-session.jsonl and pi-compaction-expected.json (fixtures of test_session_tree_compaction.py).
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, outDir] = process.argv.slice(2);
const pi = await import(pathToFileURL(join(packageDir, "dist/index.js")).href);
const { prepareCompaction } = await import(pathToFileURL(join(packageDir, "dist/core/compaction/compaction.js")).href);
const work = mkdtempSync(join(tmpdir(), "pinb-compaction-"));
const sm = pi.SessionManager.create("/project", work);
let t = 1767225600000;
const ts = () => (t += 1000);
const usage = (total) => ({ input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const text = (n, c = "x") => c.repeat(n);
const user = (s) => sm.appendMessage({ role: "user", content: [{ type: "text", text: s }], timestamp: ts() });
const asst = (content, stopReason = "stop", total = 0) => sm.appendMessage({ role: "assistant", content, api: "faux", provider: "faux", model: "faux-1", usage: usage(total), stopReason, timestamp: ts() });
const result = (id, name, s) => sm.appendMessage({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text: s }], isError: false, timestamp: ts() });
const ids = {};
sm.appendMessage({ role: "system", content: "", sections: { preamble: text(400, "p") }, toolsAdded: [{ name: "read", description: "Read", parameters: { type: "object" } }], timestamp: ts() });
ids.u1 = user(text(800, "a") + " 😀 émoji");
ids.a1 = asst([{ type: "thinking", thinking: text(200) }, { type: "toolCall", id: "r1", name: "read", arguments: { path: "src/a.py" } }], "toolUse");
ids.t1 = result("r1", "read", text(4000, "r"));
ids.a2 = asst([{ type: "toolCall", id: "e1", name: "edit", arguments: { path: "src/b.py", edits: [] } }, { type: "toolCall", id: "w1", name: "write", arguments: { path: "src/a.py", content: text(300) } }], "toolUse");
ids.t2 = result("e1", "edit", "ok");
ids.t3 = result("w1", "write", "ok");
ids.a3 = asst([{ type: "text", text: text(600, "d") }], "stop", 5000);
ids.custom = sm.appendCustomEntry("state", { n: 1 });
ids.u2 = user(text(1200, "b"));
ids.a4 = asst([{ type: "toolCall", id: "r2", name: "read", arguments: { path: "docs/c.md" } }], "toolUse");
ids.t4 = result("r2", "read", text(8000, "s"));
ids.a5 = asst([{ type: "text", text: text(900, "e") }], "stop", 9000);
ids.cm = sm.appendCustomMessageEntry("note", text(500, "n"), true);
ids.u3 = user(text(2000, "c"));
ids.a6 = asst([{ type: "text", text: text(300, "f") }], "error");
ids.edit = sm.appendContextEdit(ids.a6, null);
ids.a7 = asst([{ type: "text", text: text(700, "g") }], "stop", 12000);
ids.c1 = sm.appendCompaction("First summary.", ids.u2, 12000, { readFiles: ["old/read.md"], modifiedFiles: ["old/mod.py"] });
ids.u4 = user(text(1600, "h"));
ids.a8 = asst([{ type: "toolCall", id: "r3", name: "read", arguments: { path: "src/d.py" } }], "toolUse");
ids.t5 = result("r3", "read", text(6000, "t"));
ids.a9 = asst([{ type: "text", text: text(400, "i") }], "stop", 15000);
ids.u5 = user(text(100, "j"));

const entries = sm.getEntries();
const cases = {};
for (const leaf of ["a3", "a5", "a6", "edit", "a7", "c1", "u4", "t5", "a9", "u5"]) {
  for (const keep of [1, 500, 1500, 3000, 20000]) {
    const branch = sm.getBranch(ids[leaf]);
    const p = prepareCompaction(branch, { enabled: true, reserveTokens: 16384, keepRecentTokens: keep });
    cases[`${leaf}/${keep}`] = p === undefined ? null : {
      firstKeptEntryId: p.firstKeptEntryId,
      messagesToSummarize: p.messagesToSummarize.map((m) => [m.role, m.timestamp]),
      turnPrefixMessages: p.turnPrefixMessages.map((m) => [m.role, m.timestamp]),
      isSplitTurn: p.isSplitTurn,
      tokensBefore: p.tokensBefore,
      previousSummary: p.previousSummary ?? null,
      readFiles: [...p.fileOps.read].sort(),
      editedFiles: [...p.fileOps.edited].sort(),
      writtenFiles: [...p.fileOps.written].sort(),
    };
  }
}
const estimates = Object.fromEntries(entries.filter((e) => e.type === "message").map((e) => [e.id, pi.estimateTokens(e.message)]));
const file = readdirSync(work).find((f) => f.endsWith(".jsonl"));
copyFileSync(join(work, file), join(outDir, "pi-compaction-session.jsonl"));
writeFileSync(join(outDir, "pi-compaction-expected.json"), `${JSON.stringify({ ids, estimates, cases }, null, 2)}\n`);
rmSync(work, { recursive: true });
