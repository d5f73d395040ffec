// The no-SMC notice of a launched tree of C (the LD_PRELOAD library) and Node (the shim) programs: once
// for the tree, in markers of the user's own private directory, which another user can't pre-create.
// On a kernel with SMC there is no notice (lane smcd-6.12 runs this file there: it imports host-smc).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { sockprobeFixture } from '../helpers/preload-lib';
import { smcRun } from '../helpers/run';

const lines = (s: string): string[] => s.split('\n').filter((l) => l.trim() !== '');

describe('notices of the LD_PRELOAD library', () => {
  const fx = sockprobeFixture();
  it(`a tree of C and Node programs ${HOST_HAS_SMC ? 'on a kernel with SMC prints no notice' : 'prints the no-SMC notice once, and a marker directory of another user never silences it'}`, async () => {
    const tree = `"${fx.probe}" connect 127.0.0.1 1; "${process.execPath}" -e "require('net').connect(1,'127.0.0.1').on('error',()=>{})"; "${fx.probe}" connect 127.0.0.1 1`;
    const warnings = (stderr: string): string[] => lines(stderr).filter((l) => /^WARN: smc-run\[\d+\]: /.test(l));
    const r = await smcRun(['sh', '-c', tree]);
    expect(warnings(r.stderr), r.stderr).toHaveLength(HOST_HAS_SMC ? 0 : 1);
    if (HOST_HAS_SMC || process.getuid?.() !== 0) return;
    // $TMPDIR/smc-run-0 made first by another user: not a place for markers, so every process prints
    const tmp = fs.mkdtempSync(path.join(fx.dir, 'tmp-'));
    fs.mkdirSync(path.join(tmp, 'smc-run-0'), 0o777);
    fs.chownSync(path.join(tmp, 'smc-run-0'), 65534, 65534);
    const env = { TMPDIR: tmp, XDG_RUNTIME_DIR: '' };
    const c = await smcRun(['sh', '-c', `"${fx.probe}" connect 127.0.0.1 1; "${fx.probe}" connect 127.0.0.1 1`], env);
    expect(warnings(c.stderr), c.stderr).toHaveLength(2);
    expect(fs.readdirSync(path.join(tmp, 'smc-run-0'))).toEqual([]);
  });

});
