import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  // The SDK loads its .wasm and its worker with new URL(..., import.meta.url);
  // pre-bundling would move the SDK away from those files.
  optimizeDeps: { exclude: ['flowtrack'] },
  worker: { format: 'es' },
  build: { target: 'es2022', chunkSizeWarningLimit: 4096 },
});
