// The targeted update of bench/growth.bench.mjs (not a benchmark itself): `--only` over a tenth of the integrations
// store-0 ... store-(N-1) at every N, so the phase does twice the work at 2N as at N and its ratio reads as growth.
// (`store-1*` selected 1,111 at 2,500 and at 5,000 alike, 1 + 10 + 100 + 1,000: the same updates at both sizes.)
export const GROWTH_TARGET = 'Integration/store-*0';
