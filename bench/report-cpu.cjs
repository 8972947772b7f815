// Preloaded (--require) into a benchmarked child process: at exit, its CPU time (user + system, all
// threads) on stderr, so a benchmark can compare processes by CPU as well as by wall time.
process.on('exit', () => {
  const u = process.cpuUsage();
  process.stderr.write(`\nGOVOPS_BENCH_CPU ${((u.user + u.system) / 1000).toFixed(1)}\n`);
});
