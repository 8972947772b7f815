// Imported first by every bench that times a process it starts (and by run.mjs). Node 20 reads the whole
// NODE_EXTRA_CA_CERTS bundle as each process starts, before any code runs: with Debian's bundle, ~120 ms of CPU on
// every `node` (`node -e 0`: 170 ms of wall time instead of 50). That cost is the machine's, not govops', and it
// would sit in every process of a ratio, govops' and the bare one's alike. The benches talk only to 127.0.0.1, so
// the processes they start go without it; a bench says so when it was set.
if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  delete process.env.NODE_EXTRA_CA_CERTS;
  console.log('(NODE_EXTRA_CA_CERTS was set: unset for the processes this bench starts)');
}
