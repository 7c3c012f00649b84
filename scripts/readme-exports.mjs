/**
 * The "## Exports" section of packages/<name>/README.md, made from each package.json "exports"
 * subpath and the source it builds from (src/<entry>.ts, through the TypeScript compiler): values
 * and types, sorted. `node scripts/readme-exports.mjs` prints what differs and exits 1 when a
 * README is out of date; `--write` rewrites the sections (after the example, before the API).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const write = process.argv.includes('--write');
const pkgs = fs.readdirSync(`${root}/packages`).filter((d) => fs.existsSync(`${root}/packages/${d}/package.json`));
const entries = [];
for (const dir of pkgs) {
  const pj = JSON.parse(fs.readFileSync(`${root}/packages/${dir}/package.json`, 'utf8'));
  for (const [sub, target] of Object.entries(pj.exports ?? {})) {
    if (sub === './package.json') continue;
    const js = typeof target === 'string' ? target : (target.import?.default ?? target.import ?? target.default);
    const base = path.basename(js).replace(/\.js$/, '');
    const src = `${root}/packages/${dir}/src/${base}.ts`;
    if (!fs.existsSync(src)) throw new Error(`no source for ${dir} ${sub}: ${src}`);
    entries.push({
      dir,
      name: pj.name,
      sub,
      spec: sub === '.' ? pj.name : `${pj.name}/${sub.slice(2)}`,
      src,
      cjs: typeof target !== 'string' && target.require !== undefined,
    });
  }
}
const program = ts.createProgram(
  entries.map((e) => e.src),
  {
    module: ts.ModuleKind.ESNext,
    target: ts.ScriptTarget.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
  },
);
const checker = program.getTypeChecker();
for (const e of entries) {
  const sym = checker.getSymbolAtLocation(program.getSourceFile(e.src));
  e.values = [];
  e.types = [];
  for (const x of checker.getExportsOfModule(sym)) {
    const t = x.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(x) : x;
    const d = x.declarations?.[0];
    const typeOnly = d && ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly);
    (!typeOnly && t.flags & ts.SymbolFlags.Value ? e.values : e.types).push(x.name);
  }
  e.values.sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }) || a.localeCompare(b));
  e.types.sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' }) || a.localeCompare(b));
}
function wrap(prefix, names) {
  if (names.length === 0) return [`${prefix} none.`];
  const lines = [];
  let line = prefix;
  names.forEach((n, i) => {
    const word = `\`${n}\`${i === names.length - 1 ? '.' : ','}`;
    if (line.length + 1 + word.length > 100) {
      lines.push(line);
      line = `  ${word}`;
    } else line += ` ${word}`;
  });
  lines.push(line);
  return lines;
}
let changed = 0;
for (const dir of pkgs) {
  const mine = entries.filter((e) => e.dir === dir);
  const out = ['## Exports', ''];
  out.push(
    mine.length === 1
      ? `One entry point, \`${mine[0].spec}\` (\`src/${path.basename(mine[0].src)}\`); nothing else is public.`
      : `${mine.length} entry points, the subpaths of package.json \`exports\`; nothing else is public.`,
  );
  for (const e of mine) {
    out.push('');
    if (mine.length > 1) out.push(`\`${e.spec}\` (\`src/${path.basename(e.src)}\`)${e.cjs ? '' : ', ESM only'}:`, '');
    out.push(...wrap('- Values:', e.values), ...wrap('- Types:', e.types));
  }
  out.push('');
  const section = out.join('\n');
  const file = `${root}/packages/${dir}/README.md`;
  const text = fs.readFileSync(file, 'utf8');
  const existing = text.match(/^## Exports\n[\s\S]*?(?=^## )/m);
  let next;
  if (existing) next = text.replace(existing[0], `${section}\n`);
  else {
    // After the example: before the first "## " heading that follows "## Example(s)".
    const ex = text.search(/^## Examples?\n/m);
    const rest = text.slice(ex + 5);
    const at = ex + 5 + rest.search(/^## /m);
    next = `${text.slice(0, at)}${section}\n${text.slice(at)}`;
  }
  if (next !== text) {
    changed++;
    if (write) fs.writeFileSync(file, next);
    else console.log(`packages/${dir}/README.md: its Exports section should read\n${section}`);
  }
}
console.error(`${changed} README(s) ${write ? 'written' : 'out of date'}`);
if (!write && changed > 0) process.exitCode = 1;
