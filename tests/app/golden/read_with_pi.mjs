// Loads a pinb-written session file with real Pi and prints what Pi makes of it.
// Usage: node read_with_pi.mjs <pi-coding-agent dist/index.js> <session.jsonl> <ids.json> > pinb-session-pi-read.json
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [indexPath, sessionPath, idsPath] = process.argv.slice(2);
const pi = await import(pathToFileURL(indexPath).href);
const sm = pi.SessionManager.open(sessionPath, "/nonexistent-session-dir", "/project");
const ids = JSON.parse(readFileSync(idsPath, "utf8"));
const entries = sm.getEntries();
const contexts = {};
for (const [name, leafId] of Object.entries(ids)) {
  const context = pi.buildSessionContext(entries, leafId);
  contexts[name] = { leafId, context, contextEntryIds: pi.buildContextEntries(entries, leafId).map((e) => e.id), llm: pi.convertToLlm(context.messages) };
}
const rewritten = [sm.getHeader(), ...entries].map((e) => JSON.stringify(e)).join("\n") + "\n";
const tree = (nodes) => nodes.map((n) => ({ id: n.entry.id, label: n.label ?? null, children: tree(n.children) }));
console.log(JSON.stringify({
  rewrittenEqualsInput: rewritten === readFileSync(sessionPath, "utf8"),
  leafId: sm.getLeafId(),
  sessionName: sm.getSessionName() ?? null,
  branch: sm.getBranch().map((e) => e.id),
  tree: tree(sm.getTree()),
  contexts,
}, null, 2));
