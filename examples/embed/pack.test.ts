import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sqliteStore } from '@tollgate/store-sqlite';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedVersion, packProject, ROOT, type PackedProject } from './test/pack-project';
import { runEmbed, runtimeBinary } from './test/run-embed';

// What a user gets from npm: every public package packed, installed from the tarballs into a
// fresh project, typechecked as a strict consumer, and the examples of docs/embedding.md (the
// files of this folder) served on Node, Bun and Deno with the SQLite store, driven by the openai SDK.

const HERE = fileURLToPath(new URL('.', import.meta.url));
const EXAMPLES = ['gateway.ts', 'node-hono.ts', 'node-http.ts', 'bun.ts', 'deno.ts'];
/** The names the documented public API promises (each package README), by entry point. */
const PROMISED: Record<string, string[]> = {
  '@tollgate/gateway': ['createGateway'],
  '@tollgate/billing': ['memoryStore'],
  '@tollgate/limiter': ['memoryLimiter'],
  '@tollgate/providers': ['openaiCompatible'],
  '@tollgate/store-sqlite': ['sqliteStore'],
  '@tollgate/testing': ['fakeOpenAI'],
};
// gateway.ts's fake upstream counts a token per word: 'Say hello' is 2, the reply 8.
const REPLY = 'Hello from the fake upstream, served by Tollgate.';
const COST = Math.ceil((2 * 150_000 + 8 * 600_000) / 1_000_000);
const CREDITS = 5_000_000;
/** Under CI a runtime that is missing fails; on a laptop without it, its test is skipped. */
const CI = process.env.CI === 'true';

const run = promisify(execFile);

interface Compiled {
  code: number;
  output: string;
}

async function compile(cwd: string, command: string, args: string[]): Promise<Compiled> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

const strict = { strict: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true, skipLibCheck: false, target: 'ES2022', types: ['node'] };

describe('the packed packages, installed in a fresh project', () => {
  let project: PackedProject;
  let nodenext: Compiled;
  let bundler: Compiled;
  let bunTypes: Compiled;

  beforeAll(async () => {
    // Bun's types at the pinned Bun's version, for bun.ts (the workspace has no use for them).
    project = await packProject(['hono', '@hono/node-server', '@types/node'], { '@types/bun': installedVersion('bun') });
    const src = join(project.dir, 'src');
    for (const file of EXAMPLES) copyFileSync(join(HERE, file), join(src, file));
    // Every entry point of every public package, loaded and listed by an ESM consumer, and every
    // one that offers a `require` condition by a CJS consumer.
    const consumer = (entries: string[]) =>
      [
        ...entries.map((entry, index) => `import * as entry${index} from '${entry}';`),
        `const names: Record<string, string[]> = {${entries.map((entry, index) => `'${entry}': Object.keys(entry${index}).sort()`).join(', ')}};`,
        'console.log(JSON.stringify(names));',
      ].join('\n');
    writeFileSync(join(src, 'entry-points.ts'), consumer(project.packages.flatMap(({ entryPoints }) => entryPoints)));
    writeFileSync(join(src, 'entry-points.cts'), consumer(project.packages.flatMap(({ requireEntryPoints }) => requireEntryPoints)));
    const tsconfig = (compilerOptions: object, exclude: string[]) =>
      JSON.stringify({ compilerOptions: { ...strict, ...compilerOptions }, include: ['src'], exclude });
    // nodenext: ESM and CJS, and the Node examples, which it also compiles to the JavaScript they run
    // from. Hono's own types need the DOM library, so this one has it.
    writeFileSync(
      join(project.dir, 'tsconfig.nodenext.json'),
      tsconfig(
        { module: 'nodenext', moduleResolution: 'nodenext', lib: ['ES2023', 'DOM'], rewriteRelativeImportExtensions: true, rootDir: 'src', outDir: 'dist' },
        ['src/bun.ts', 'src/deno.ts'],
      ),
    );
    // bundler: ES2023 without the DOM library, as a server project is set up: the packages' types
    // must not need it (Node's types give Request, Response and the streams).
    writeFileSync(
      join(project.dir, 'tsconfig.bundler.json'),
      tsconfig({ module: 'esnext', moduleResolution: 'bundler', lib: ['ES2023'], allowImportingTsExtensions: true, noEmit: true }, [
        'src/bun.ts',
        'src/deno.ts',
        'src/node-hono.ts',
        'src/node-http.ts',
        'src/entry-points.cts',
      ]),
    );
    // Bun: bun.ts with Bun's types instead of Node's. Their declarations expect a newer @types/node
    // than Node 20's, so library files are not checked here; the packages' own are, by the configs above.
    writeFileSync(
      join(project.dir, 'tsconfig.bun.json'),
      JSON.stringify({
        compilerOptions: {
          ...strict,
          skipLibCheck: true,
          types: ['bun'],
          module: 'esnext',
          moduleResolution: 'bundler',
          lib: ['ESNext'],
          allowImportingTsExtensions: true,
          noEmit: true,
        },
        files: ['src/bun.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    // The nodenext build also emits the JavaScript the Node examples run from.
    nodenext = await compile(project.dir, process.execPath, [tsc, '-p', 'tsconfig.nodenext.json']);
    bundler = await compile(project.dir, process.execPath, [tsc, '-p', 'tsconfig.bundler.json']);
    bunTypes = await compile(project.dir, process.execPath, [tsc, '-p', 'tsconfig.bun.json']);
  }, 600_000);

  afterAll(() => project?.remove());

  it('typechecks as a strict consumer with moduleResolution nodenext (ESM and CJS)', () => {
    expect(nodenext).toEqual({ code: 0, output: '' });
  });

  it('typechecks as a strict consumer with moduleResolution bundler', () => {
    expect(bundler).toEqual({ code: 0, output: '' });
  });

  it("typechecks the Bun example with Bun's types", () => {
    expect(bunTypes).toEqual({ code: 0, output: '' });
  });

  it('loads every entry point as ESM, and as CJS where it offers require, with the same exports and the promised names', async () => {
    const esm = JSON.parse((await run(process.execPath, ['dist/entry-points.js'], { cwd: project.dir })).stdout) as Record<string, string[]>;
    const cjs = JSON.parse((await run(process.execPath, ['dist/entry-points.cjs'], { cwd: project.dir })).stdout) as Record<string, string[]>;
    expect(Object.keys(esm)).toEqual(project.packages.flatMap(({ entryPoints }) => entryPoints));
    expect(Object.keys(cjs)).toEqual(project.packages.flatMap(({ requireEntryPoints }) => requireEntryPoints));
    for (const [entry, names] of Object.entries(cjs)) expect({ entry, names }).toEqual({ entry, names: esm[entry] });
    for (const [entry, names] of Object.entries(PROMISED)) expect(esm[entry]).toEqual(expect.arrayContaining(names));
  });

  const deno = runtimeBinary('deno');
  const bun = runtimeBinary('bun');

  it.skipIf(!deno && !CI)(
    'typechecks the Deno example with deno check',
    async () => {
      expect(deno, 'deno, a pinned devDependency, is not installed').toBeDefined();
      expect(await compile(project.dir, deno!, ['check', '--quiet', 'src/deno.ts'])).toEqual({ code: 0, output: '' });
    },
    60_000,
  );

  const DENO_FLAGS = ['run', '--allow-net=127.0.0.1', '--allow-env', '--allow-read', '--allow-write'];
  const runtimes = [
    { name: 'Node + Hono (node-hono.ts)', binary: process.execPath, args: ['dist/node-hono.js'] },
    { name: 'Node http (node-http.ts)', binary: process.execPath, args: ['dist/node-http.js'] },
    { name: 'Bun.serve (bun.ts)', binary: bun, args: ['src/bun.ts'] },
    { name: 'Deno.serve (deno.ts)', binary: deno, args: [...DENO_FLAGS, 'src/deno.ts'] },
  ];

  for (const { name, binary, args } of runtimes) {
    it.skipIf(!binary && !CI)(
      `${name}: models, a chat and a stream with usage, then the SQLite ledger`,
      async () => {
        expect(binary, `${name}: the runtime, a pinned devDependency, is not installed`).toBeDefined();
        const file = join(project.dir, `${args.at(-1)!.replace(/\W/g, '-')}.db`);
        const embed = await runEmbed(binary!, args, project.dir, { TOLLGATE_DB: file, PORT: '0' });
        try {
          const client = new OpenAI({ apiKey: embed.demoKey, baseURL: embed.baseURL, maxRetries: 0 });
          expect((await client.models.list()).data.map((model) => model.id)).toEqual(['fast']);

          const completion = await client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'Say hello' }] });
          expect(completion.choices[0]!.message.content).toBe(REPLY);
          expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 8, total_tokens: 10 });

          const stream = await client.chat.completions.create({
            model: 'fast',
            messages: [{ role: 'user', content: 'Say hello' }],
            stream: true,
            stream_options: { include_usage: true },
          });
          let text = '';
          const usages: unknown[] = [];
          for await (const chunk of stream) {
            text += chunk.choices[0]?.delta.content ?? '';
            if (chunk.usage) usages.push(chunk.usage);
          }
          expect(text).toBe(REPLY);
          expect(usages).toEqual([expect.objectContaining({ prompt_tokens: 2, completion_tokens: 8, total_tokens: 10 })]);
        } finally {
          // Its graceful shutdown settles what is in flight and closes the file.
          expect(await embed.stop(), embed.stderr()).toBe(0);
        }

        // The ledger, read back from the file on Node: one credit, two charges at the model's prices.
        const store = sqliteStore(file);
        try {
          const found = await store.findKey(createHash('sha256').update(embed.demoKey).digest('hex'));
          const account = found!.account.id;
          expect((await store.entries(account)).map(({ kind, micros }) => ({ kind, micros }))).toEqual([
            { kind: 'charge', micros: -COST },
            { kind: 'charge', micros: -COST },
            { kind: 'credit', micros: CREDITS },
          ]);
          expect(await store.getBalance(account)).toEqual({ balance: CREDITS - 2 * COST, held: 0, available: CREDITS - 2 * COST });
        } finally {
          await store.close();
        }
      },
      60_000,
    );
  }
});
