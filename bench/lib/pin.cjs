'use strict';
// CPU pinning for the guest benches' client and server processes: taskset when the system has it, else
// the command line unchanged (the results say whether the run was pinned).
//
//   hasTaskset           -> whether `taskset` runs here
//   pin(cpu, argv)       -> argv prefixed with `taskset -c cpu` where it can be
const { execFileSync } = require('node:child_process');

const hasTaskset = (() => { try { execFileSync('taskset', ['-c', '0', 'true']); return true; } catch { return false; } })();
const pin = (cpu, argv) => (hasTaskset ? ['taskset', '-c', cpu, ...argv] : argv);

module.exports = { hasTaskset, pin };
