// Test what users get: `npm pack` the package, install the tarball into a
// fresh project, import it there, run a process, and type-check a consumer
// file against the shipped .d.ts.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const sh = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('npm pack tarball', () => {
  let dir;
  let files;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'flowtrack-pack-'));
    const [info] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', dir], pkgDir));
    files = info.files.map((f) => f.path).sort();
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir, info.filename)], dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('ships the build output, the module and nothing else', () => {
    assert.ok(files.includes('dist/flowtrack.wasm'));
    assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts'));
    assert.ok(files.includes('dist/worker.js'));
    assert.ok(files.includes('LICENSE'), 'the tarball carries the licence');
    const stray = files.filter((f) => !/^dist\/.*\.(js|d\.ts|wasm)$/.test(f) && !['package.json', 'README.md', 'LICENSE'].includes(f));
    assert.deepEqual(stray, []);
  });

  it('compiles every TypeScript snippet of the README under strict', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    assert.ok(snippets.length > 0, 'the README has TypeScript snippets');
    const names = snippets.map((code, i) => {
      const name = `readme${i}.ts`;
      // The snippets use a document they do not show.
      writeFileSync(join(dir, name), `declare const xml: string;\n${code}\nexport {};\n`);
      return name;
    });
    writeFileSync(
      join(dir, 'tsconfig.readme.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, lib: ['ES2022', 'DOM'], types: [] }, files: names }),
    );
    sh('node', [join(pkgDir, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.readme.json'], dir);
  });

  it('installs and runs a process in a fresh project', () => {
    const order = readFileSync(new URL('./fixtures/order.bpmn', import.meta.url), 'utf8');
    writeFileSync(join(dir, 'order.bpmn'), order);
    writeFileSync(
      join(dir, 'main.js'),
      `import { readFileSync } from 'node:fs';
import { Engine, DeployError } from 'flowtrack';
const engine = await Engine.create();
await engine.deploy(readFileSync('order.bpmn', 'utf8'), 'order.bpmn');
for (const type of ['check-order', 'userTask', 'reserve-stock', 'charge-payment']) engine.handle(type, () => ({ [type]: true }));
const { state } = await engine.start('order', { amount: 250 });
const bad = await engine.deploy('<x/>').catch((e) => e instanceof DeployError);
console.log(JSON.stringify({ state, bad }));
engine.close();
`,
    );
    assert.deepEqual(JSON.parse(sh('node', ['main.js'], dir)), { state: 'completed', bad: true });
  });

  it('serves the module and the worker from a Vite dev server without configuration', async () => {
    const { createServer } = await import('vite');
    writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/app.js"></script>\n');
    writeFileSync(join(dir, 'app.js'), "import { Engine } from 'flowtrack';\nexport const create = () => Engine.create();\n");
    const server = await createServer({ root: dir, configFile: false, logLevel: 'silent', server: { port: 0, host: '127.0.0.1' } });
    await server.listen();
    try {
      const base = `http://127.0.0.1:${server.httpServer.address().port}`;
      const app = await (await fetch(`${base}/app.js`)).text();
      const dep = app.match(/from "([^"]*flowtrack[^"]*)"/)?.[1];
      assert.ok(dep, `app.js imports the SDK: ${app.slice(0, 200)}`);
      const depURL = new URL(dep, base);
      const sdk = await (await fetch(depURL)).text();
      // The dev server pre-bundles the SDK into its own directory; the
      // URLs of the module and the worker must still find their files.
      const wasm = sdk.match(/new URL\((?:\/\*[^*]*\*\/ )?"([^"]*\.wasm)"/)?.[1];
      const worker = sdk.match(/new URL\((?:\/\*[^*]*\*\/ )?"([^"]*worker\.js[^"]*)"/)?.[1];
      assert.ok(wasm && worker, 'the pre-bundled SDK names its module and its worker');
      const res = await fetch(new URL(wasm, depURL));
      assert.equal(res.headers.get('content-type'), 'application/wasm', `${wasm} serves the module, not a fallback page`);
      assert.deepEqual([...new Uint8Array(await res.arrayBuffer()).subarray(0, 4)], [0, 0x61, 0x73, 0x6d]);
      const w = await fetch(new URL(worker, depURL));
      assert.match(w.headers.get('content-type') ?? '', /javascript/, `${worker} serves the worker`);
    } finally {
      await server.close();
    }
  });

  it('type-checks a consumer against the shipped declarations', () => {
    writeFileSync(
      join(dir, 'consumer.ts'),
      `import { Engine, FlowtrackError, type FlowEvent, type Job, type Token } from 'flowtrack';
export async function run(xml: string): Promise<Token[]> {
  const engine = await Engine.create({ time: 'virtual' });
  await engine.deploy(xml);
  engine.on('jobCreated', (ev: FlowEvent<'jobCreated'>) => {
    const key: number = ev.jobKey; // required on a jobCreated record
    void key;
  });
  const close: () => Promise<void> = () => engine.close();
  void close;
  engine.handle('work', async (job: Job) => ({ done: job.key }));
  const { instanceKey } = await engine.start('p', { n: 1 });
  await engine.advanceTime('PT5M');
  try { await engine.completeJob(-1); } catch (e) { if (e instanceof FlowtrackError) void e.code; }
  return engine.tokens(instanceKey);
}
`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, lib: ['ES2022', 'DOM'], types: [] }, files: ['consumer.ts'] }),
    );
    sh('node', [join(pkgDir, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);
  });
});
