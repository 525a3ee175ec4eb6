// Runs real Pi's in-memory createBranchedSession on pi-session.jsonl for a few leaves and prints the resulting
// entries (new label ids and the new header are random; the test compares everything else).
// Usage: node make_pi_branched.mjs <pi-coding-agent dist/index.js> pi-session.jsonl > pi-branched.json
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [indexPath, sessionPath] = process.argv.slice(2);
const pi = await import(pathToFileURL(indexPath).href);
const lines = readFileSync(sessionPath, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const ids = JSON.parse(readFileSync(new URL("./pi-session-contexts.json", pathToFileURL(sessionPath)), "utf8")).ids;
const out = {};
for (const leaf of ["a5", "mainLeaf", "u2", "label", "unlabel"]) {
  const sm = pi.SessionManager.inMemory("/project", undefined, structuredClone(lines));
  if (leaf === "u2") sm.appendLabelChange(ids.u2, "second");
  const ret = sm.createBranchedSession(ids[leaf]);
  out[leaf] = { returned: ret ?? null, header: { ...sm.getHeader(), id: "<new>", timestamp: "<new>" }, leafId: sm.getLeafId(), entries: sm.getEntries() };
}
try {
  pi.SessionManager.inMemory("/project", undefined, structuredClone(lines)).createBranchedSession("deadbeef");
} catch (e) {
  out.error = e.message;
}
console.log(JSON.stringify(out, null, 2));
