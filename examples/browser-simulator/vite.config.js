import { fileURLToPath } from 'node:url';
import { defineConfig, searchForWorkspaceRoot } from 'vite';

// The SDK is linked from outside this folder (package.json:
// "flowtrack": "file:../../sdk-js"), and the dev server serves only files
// under its allow list: the SDK's folder is added to it, or `npm run dev`
// answers 403 for the SDK's worker and .wasm and the engine never starts.
const sdk = fileURLToPath(new URL('../../sdk-js', import.meta.url));

export default defineConfig({
  base: './',
  // The SDK loads its .wasm and its worker with new URL(..., import.meta.url);
  // pre-bundling would move the SDK away from those files.
  optimizeDeps: { exclude: ['flowtrack'] },
  server: { fs: { allow: [searchForWorkspaceRoot(process.cwd()), sdk] } },
  worker: { format: 'es' },
  build: { target: 'es2022', chunkSizeWarningLimit: 4096 },
});
