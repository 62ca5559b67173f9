// Builds the page that runs the SDK's own test files in a browser (run.mjs):
// the tests import node:test, node:assert and node:fs, which resolve to the
// small shims of shim/. The SDK itself is built and bundled as any user's
// Vite build bundles it, with no configuration of its own.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const shim = (name) => fileURLToPath(new URL(`./shim/${name}`, import.meta.url));

// registerTests keeps the test files in the bundles: the package says it
// has no side effects, which is true of the SDK but not of its test files,
// whose import registers their tests.
function registerTests() {
  return {
    name: 'flowtrack-register-tests',
    transform(code, id) {
      if (/[\\/]test[\\/].*\.mjs$/.test(id)) return { code, moduleSideEffects: true };
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  resolve: {
    alias: {
      'node:assert/strict': shim('node-assert.mjs'),
      'node:test': shim('node-test.mjs'),
      'node:fs': shim('node-fs.mjs'),
    },
  },
  worker: { format: 'es', plugins: () => [registerTests()] },
  build: {
    target: 'es2022',
    emptyOutDir: true,
    chunkSizeWarningLimit: 8192,
    assetsInlineLimit: 0,
  },
  plugins: [registerTests()],
});
