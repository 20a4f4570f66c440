// SIGUSR2: start the CPU profiler; SIGUSR2 again: stop it and write PROF_OUT.
const inspector = require('node:inspector');
const fs = require('node:fs');
const s = new inspector.Session();
s.connect();
let on = false;
process.on('SIGUSR2', () => {
  if (!on) { on = true; s.post('Profiler.enable', () => s.post('Profiler.setSamplingInterval', { interval: 200 }, () => s.post('Profiler.start'))); return; }
  s.post('Profiler.stop', (err, { profile }) => { fs.writeFileSync(process.env.PROF_OUT, JSON.stringify(profile)); process.kill(process.pid, 'SIGKILL'); });
});
