// Runs real Pi's read and bash tools on a few inputs and prints their results (the fixtures of test_tools.py).
// Paths under the temporary directory are replaced by "/project". Usage: node make_pi_tool_results.mjs <pi dir>
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const pi = await import(pathToFileURL(join(process.argv[2], "dist/index.js")).href);
const dir = realpathSync(mkdtempSync(join(tmpdir(), "pinb-tools-")));
writeFileSync(join(dir, "README.md"), "# Demo\ncafé ☕\n\tindented\n");
writeFileSync(join(dir, "ten.txt"), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
writeFileSync(join(dir, "empty.txt"), "");
const scrub = (value) => JSON.parse(JSON.stringify(value).split(dir).join("/project"));
const read = pi.createReadToolDefinition(dir);
const bash = pi.createBashToolDefinition(dir);
const run = async (tool, params) => {
  const updates = [];
  const onUpdate = (u) => updates.push({ content: u.content, details: u.details === undefined ? null : u.details });
  try {
    const r = await tool.execute("call", params, undefined, onUpdate, undefined);
    const result = { ok: true, content: r.content, details: r.details ?? null, isError: r.isError ?? false, structuredContent: r.structuredContent };
    if (tool.name === "bash") result.updates = updates;
    return scrub(result);
  } catch (e) {
    return scrub({ ok: false, error: e.message });
  }
};
const out = { definitions: {}, read: {}, bash: {} };
for (const tool of [read, bash]) out.definitions[tool.name] = scrub({ name: tool.name, label: tool.label, description: tool.description, parameters: tool.parameters });
const readCases = {
  small: { path: "README.md" },
  absolute: { path: join(dir, "README.md") },
  at_prefix: { path: "@README.md" },
  limit: { path: "ten.txt", limit: 3 },
  offset_limit: { path: "ten.txt", offset: 4, limit: 2 },
  offset_tail: { path: "ten.txt", offset: 9 },
  offset_beyond: { path: "ten.txt", offset: 20 },
  empty: { path: "empty.txt" },
  missing: { path: "nope.md" },
  missing_absolute: { path: "/nonexistent-pinb/x.md" },
};
for (const [name, params] of Object.entries(readCases)) out.read[name] = await run(read, params);
const bashCases = {
  echo: { command: "echo hello" },
  printf_no_newline: { command: "printf 'a\\nb'" },
  silent: { command: "true" },
  exit_code: { command: "echo oops; exit 3" },
  exit_silent: { command: "exit 1" },
  stderr: { command: "echo out; echo err 1>&2" },
};
for (const [name, params] of Object.entries(bashCases)) {
  const r = await run(bash, params);
  if (r.structuredContent) r.structuredContent.wall_time_seconds = 0;
  out.bash[name] = r;
}
rmSync(dir, { recursive: true });
console.log(JSON.stringify(out, null, 2));
