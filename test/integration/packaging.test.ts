// The published package: `npm pack`, install the tarball into an empty project, run `npx smc-run`
// from there (CJS and ESM consumers); and an install whose addon cannot build still runs programs on
// TCP with the one notice.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, run } from '../helpers/run';

const npm = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  run('sh', ['-c', `cd "${cwd}" && npm ${args.map((a) => `'${a}'`).join(' ')}`], { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...env }, { timeoutMs: 300_000 });

describe('npm package', () => {
  let dir: string;
  let tarball: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-pack-'));
    const packed = await npm(['pack', '--pack-destination', dir, '--json', '--ignore-scripts'], REPO);
    expect(packed.code, packed.stderr).toBe(0);
    tarball = path.join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename ?? '');
  }, 300_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('ships the built JS, the addon sources and the CLI, nothing else', async () => {
    const list = await run('tar', ['-tzf', tarball]);
    const files = list.stdout.split('\n').filter(Boolean);
    expect(files).toContain('package/bin/smc-run');
    expect(files).toContain('package/dist/preload.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files).toContain('package/native/socket.cc');
    expect(files).toContain('package/binding.gyp');
    expect(files.filter((f) => /package\/(test|src|build|node_modules)\//.test(f))).toEqual([]);
  });

  it('installs into an empty project and runs under npx smc-run (CJS and ESM consumers)', async () => {
    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}');
    const inst = await npm(['install', '--no-save', tarball], app);
    expect(inst.code, inst.stderr).toBe(0);
    expect(fs.existsSync(path.join(app, 'node_modules', 'smc-run', 'build', 'Release', 'smc_run.node'))).toBe(true);
    const prog = `const net=require('net');const {hookStats}=require('smc-run');const s=net.createServer(c=>c.end('ok')).listen(0,'127.0.0.1',()=>net.connect(s.address().port,'127.0.0.1').on('data',d=>{console.log(String(d),hookStats().smc);s.close()}))`;
    const r = await run('sh', ['-c', `cd "${app}" && npx smc-run node -e "${prog.replace(/"/g, '\\"')}"`], { SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('ok 2');
    const esm = await run('sh', ['-c', `cd "${app}" && node --input-type=module -e "import { getSmcInfo, enableSmc } from 'smc-run'; console.log(typeof getSmcInfo, typeof enableSmc)"`]);
    expect(esm.stdout.trim()).toBe('function function');
  });

  it('an install whose addon cannot build still runs programs on TCP with one notice', async () => {
    const app = path.join(dir, 'nobuild');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{"name":"nobuild","version":"1.0.0","private":true}');
    const inst = await npm(['install', '--no-save', '--foreground-scripts', tarball], app, { CXX: '/bin/false', CC: '/bin/false' });
    expect(inst.code, inst.stderr).toBe(0);
    expect(inst.stderr + inst.stdout).toMatch(/could not build the native addon/);
    expect(fs.existsSync(path.join(app, 'node_modules', 'smc-run', 'build', 'Release', 'smc_run.node'))).toBe(false);
    const r = await run('sh', ['-c', `cd "${app}" && npx smc-run node -e "require('net').createServer().listen(0,function(){console.log('served');this.close()})"`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('served\n');
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/native addon unavailable .* npm rebuild smc-run/);
  });
});
