import cluster from 'node:cluster';
const n = Number(process.env.WORKERS ?? 2);
if (cluster.isPrimary) {
  for (let i = 0; i < n; i++) cluster.fork();
  process.on('SIGINT', () => { for (const w of Object.values(cluster.workers)) w.kill('SIGINT'); setTimeout(() => process.exit(0), 500); });
} else {
  process.argv = [process.argv[0], '/work/main/dist/bin.js', 'serve'];
  await import('/work/main/dist/bin.js');
}
