'use strict';
// Which clock a guest bench measured in, from SMC_RUN_BENCH_CLOCK (the boot script sets it in the job):
// "icount" when qemu counted instructions (SMC_RUN_ACCEL=icount, test/vm/lib.sh), else the wall clock.
const ICOUNT = 'virtual time: qemu -icount shift=0,sleep=off, single-threaded TCG (one ns per guest instruction: host load does not move it)';
const WALL = 'wall clock in a multi-threaded TCG guest (host load moves it)';

/** { id: 'icount' | 'wall', text } for the results file and the report. */
function guestClock() {
  const id = process.env.SMC_RUN_BENCH_CLOCK === 'icount' ? 'icount' : 'wall';
  return { id, text: id === 'icount' ? ICOUNT : WALL };
}

/** The clock a results file names; files from before this field were wall clock. */
const clockText = (r) => (r.clock === 'icount' ? ICOUNT : WALL);

module.exports = { guestClock, clockText };
