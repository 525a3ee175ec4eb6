// Reads the shape of named types from a Pi release's .d.ts files with the TypeScript compiler API.
//
//   node reference/declarations.mjs <typescript-module-dir> <package-dir> Symbol [Symbol ...]
//
// Prints one JSON object: {symbol: {file, line, kind, discriminant?, members, variants?}} where members are the
// properties of the type as the checker resolves them (inherited and intersected ones included), each with its
// name, whether it is optional and its type as TypeScript prints it. A union type lists each variant's members and
// names the property whose literal values tell the variants apart. A symbol the files do not declare is null.
import { createRequire } from "node:module";
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const [tsDir, packageDir, ...symbols] = process.argv.slice(2);
const ts = createRequire(resolve(tsDir, "package.json"))("typescript");

function declarationFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...declarationFiles(path));
    else if (name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

const files = declarationFiles(join(packageDir, "dist"));
const program = ts.createProgram(files, { noResolve: false, skipLibCheck: true, types: [] });
const checker = program.getTypeChecker();

function membersOf(type, at) {
  return checker
    .getPropertiesOfType(type)
    .map((prop) => ({
      name: prop.getName(),
      optional: (prop.getFlags() & ts.SymbolFlags.Optional) !== 0,
      type: checker.typeToString(checker.getTypeOfSymbolAtLocation(prop, at), undefined, ts.TypeFormatFlags.NoTruncation),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function literalOf(type) {
  return type.isStringLiteral() ? type.value : null;
}

function discriminantOf(variants, at) {
  const first = variants[0];
  for (const prop of checker.getPropertiesOfType(first)) {
    const values = variants.map((variant) => {
      const own = checker.getPropertyOfType(variant, prop.getName());
      return own ? literalOf(checker.getTypeOfSymbolAtLocation(own, at)) : null;
    });
    if (values.every((value) => value !== null) && new Set(values).size > 1) return prop.getName();
  }
  return null;
}

function declared(name) {
  for (const file of program.getSourceFiles()) {
    if (!files.includes(file.fileName)) continue;
    for (const node of file.statements) {
      const isType = ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node);
      if (!isType || node.name.text !== name) continue;
      const type = checker.getTypeAtLocation(node.name);
      const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
      const where = { file: relative(packageDir, file.fileName), line };
      if (type.isUnion() && type.types.every((t) => checker.getPropertiesOfType(t).length > 0)) {
        const discriminant = discriminantOf(type.types, node);
        const variants = type.types.map((variant) => {
          const own = discriminant ? checker.getPropertyOfType(variant, discriminant) : undefined;
          const value = own ? literalOf(checker.getTypeOfSymbolAtLocation(own, node)) : null;
          return { name: checker.typeToString(variant), value, members: membersOf(variant, node) };
        });
        return { ...where, kind: "union", discriminant, members: membersOf(type, node), variants };
      }
      return { ...where, kind: ts.isInterfaceDeclaration(node) ? "interface" : "type", members: membersOf(type, node) };
    }
  }
  return null;
}

const out = {};
for (const name of symbols) out[name] = declared(name);
process.stdout.write(JSON.stringify(out) + "\n");
