// endpoints lists every endpoint of the installed
// @camunda8/orchestration-cluster-api client: its operation name, HTTP
// method and path, read from the client's generated request functions
// (each "var NAME = (options) => ... .METHOD({ ... url: PATH").

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function endpoints() {
  const dir = new URL('node_modules/@camunda8/orchestration-cluster-api/dist/', import.meta.url).pathname;
  const seen = new Map();
  for (const f of readdirSync(dir).filter((n) => n.startsWith('chunk-') && n.endsWith('.js'))) {
    const src = readFileSync(join(dir, f), 'utf8');
    const re = /var (\w+) = \(options\) => \{\s*return \(options\??\.client \?\? client\)\.(get|post|put|patch|delete)\(\{(?:(?!\nvar )[\s\S])*?url: "([^"]+)"/g;
    for (const m of src.matchAll(re)) seen.set(`${m[2].toUpperCase()} ${m[3]}`, { name: m[1], method: m[2].toUpperCase(), path: `/v2${m[3]}` });
  }
  return [...seen.values()].sort((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const e of endpoints()) console.log(`${e.method} ${e.path} ${e.name}`);
}
