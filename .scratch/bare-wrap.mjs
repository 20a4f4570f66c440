process.on('SIGINT', () => process.exit(0)); await import('./bare-proxy.mjs');
