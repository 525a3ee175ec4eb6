// Loads skills with real Pi's loadSkillsFromDir from SKILL.md files whose front matter differs between YAML 1.1
// and 1.2, and prints the files with what Pi made of them (skills by folder; diagnostics as [folder, type, first
// line of the message]).
// Usage: node make_pi_skills_frontmatter.mjs <pi-coding-agent dir> < files.json > skills_frontmatter_pi160.json
// (files.json: {"<folder>": "<SKILL.md text>"}; the committed golden's "files" is that input.)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir] = process.argv.slice(2);
const { loadSkillsFromDir } = await import(pathToFileURL(join(packageDir, "dist/core/skills.js")).href);
const files = JSON.parse(readFileSync(0, "utf8"));
const root = mkdtempSync(join(tmpdir(), "pinb-skills-"));
for (const [folder, text] of Object.entries(files)) {
  mkdirSync(join(root, folder));
  writeFileSync(join(root, folder, "SKILL.md"), text);
}
const { skills, diagnostics } = loadSkillsFromDir({ dir: root, source: "user" });
rmSync(root, { recursive: true });
const pi = {
  skills: Object.fromEntries(
    skills.map((s) => [
      basename(s.baseDir),
      { name: s.name, description: s.description, disableModelInvocation: s.disableModelInvocation },
    ]),
  ),
  diagnostics: diagnostics.map((d) => [basename(dirname(d.path)), d.type, d.message.split("\n")[0]]),
};
const how =
  "Node 22 running loadSkillsFromDir from @earendil-works/pi-coding-agent 1.6.0 (dist/core/skills.js) via " +
  "make_pi_skills_frontmatter.mjs on a temporary folder holding <folder>/SKILL.md for each entry of files";
console.log(JSON.stringify({ how, files, pi }, null, 1));
