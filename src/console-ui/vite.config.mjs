// The console's build (docs/console.md): `npm run build` runs `vite build --config src/console-ui/vite.config.mjs`
// after the server's tsc, writing dist/console (served at /console by src/http/console.ts). No CDN: everything the
// page loads is in that folder.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 600,
  },
});
