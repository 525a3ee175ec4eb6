// Builds system prompts with real Pi (createAgentSession + DefaultResourceLoader) over a file layout on disk and
// prints them as JSON, with the temporary root replaced by "" and Pi's package directory by "<pi-package>".
// Usage: HOME=<tmp>/home/user node make_pi_system_prompts.mjs <pi-coding-agent dir> > pi-system-prompts.json
// The layout is the one test_system_prompt.py builds in memory (LAYOUT there; keep them in sync).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const pi = await import(pathToFileURL(join(packageDir, "dist/index.js")).href);
const layout = JSON.parse(process.env.PINB_LAYOUT);
const cases = JSON.parse(process.env.PINB_CASES);

const out = {};
for (const [name, spec] of Object.entries(cases)) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pinb-sp-")));
  const files = { ...layout, ...(spec.extraFiles ?? {}) };
  for (const drop of spec.dropFiles ?? []) delete files[drop];
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(root + path), { recursive: true });
    writeFileSync(root + path, text);
  }
  mkdirSync(root + spec.cwd, { recursive: true });
  const agentDir = root + "/home/user/.pi/agent";
  process.env.HOME = root + "/home/user";
  const cwd = root + spec.cwd;
  const settingsManager = pi.SettingsManager.create(cwd, agentDir, { projectTrusted: spec.trusted });
  const resourceLoader = new pi.DefaultResourceLoader({ cwd, agentDir, settingsManager });
  await resourceLoader.reload();
  const { session } = await pi.createAgentSession({
    cwd, agentDir, settingsManager, resourceLoader,
    sessionManager: pi.SessionManager.inMemory(cwd),
    ...(spec.tools ? { tools: spec.tools } : {}),
  });
  const scrub = (s) => s.split(root).join("").split(realpathSync(packageDir)).join("<pi-package>");
  out[name] = {
    systemPrompt: scrub(session.systemPrompt),
    activeTools: session.getActiveToolNames(),
    skills: resourceLoader.getSkills().skills.map((s) => scrub(s.filePath)),
    contextFiles: resourceLoader.getAgentsFiles().agentsFiles.map((f) => scrub(f.path)),
  };
  session.dispose?.();
  rmSync(root, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 2));
