// Copies the engine module built by `make wasm` next to the compiled SDK, so
// that `new URL('./flowtrack.wasm', import.meta.url)` finds it in dist/ and
// `npm pack` ships it, and the repository's LICENSE into the package, which
// npm ships from the package's own directory only.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const from = process.env.FLOWTRACK_WASM ?? resolve(root, '../host/flowtrack.wasm');
const to = resolve(root, 'dist/flowtrack.wasm');
if (!existsSync(from)) {
  console.error(`copy-wasm: ${from} is missing; run \`make wasm\` at the repository root first`);
  process.exit(1);
}
mkdirSync(dirname(to), { recursive: true });
copyFileSync(from, to);
console.log(`copy-wasm: ${from} -> ${to}`);
copyFileSync(resolve(root, '../LICENSE'), resolve(root, 'LICENSE'));
