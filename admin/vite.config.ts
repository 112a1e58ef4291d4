import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Preact's JSX through esbuild: no framework plugin needed.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/admin/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: { outDir: 'dist', emptyOutDir: true },
  logLevel: 'warn',
});
