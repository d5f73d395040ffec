// The published package: `npm pack` (prepack builds the prebuilt addons), then install the tarball the
// ways consumers do, with no compiler anywhere (CC/CXX=/bin/false, a PATH with node and npm only) and
// scripts blocked: --ignore-scripts, --strict-allow-scripts=true, a global install. In each the prebuilt
// addon loads and sockets are adopted (test mode), for CommonJS and ESM consumers. Where no prebuild
// fits (simulated: musl), the one notice names the one command that builds from source, and it works.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, execFileSync } from 'node:child_process';
import { REPO, type RunResult } from '../helpers/run';

const MiB = 1024 * 1024;
const COMPILER = /(^|-)(cc|gcc|g\+\+|c\+\+|cpp|clang|clang\+\+|ld|ld\.\w+|as|make|gmake|tcc)(-[\d.]+)?$|gcc|g\+\+|clang/;
const PREBUILT = ['x64', 'arm64', 's390x'];
// the addon, the launcher's LD_PRELOAD library and the BPF switch's loader, for each architecture
const PREBUILT_FILES = ['smc_run.glibc.node', 'smc-preload.so', 'smc-bpf'];
const QUIET_NPM = { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

/** sh -c in cwd with PATH/env as given (absolute /bin/sh: the PATH may hold no shell); no stdin. */
function sh(script: string, cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `cd "${cwd}" && ${script}`], { env: { ...process.env, ...QUIET_NPM, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** ELF e_machine of a file (EI_DATA says the header's byte order) */
function elfMachine(file: string): number {
  const h = fs.readFileSync(file).subarray(0, 20);
  return h[5] === 2 ? h.readUInt16BE(18) : h.readUInt16LE(18);
}

// a consumer program: one connection through the hook; prints the reply and how many sockets were adopted
const CJS = `const net=require('net');const {hookStats}=require('smc-run');const s=net.createServer(c=>c.end('ok')).listen(0,'127.0.0.1',()=>net.connect(s.address().port,'127.0.0.1').on('data',d=>{console.log(String(d),hookStats()?.smc??'no-hook');s.close()}))`;
const ESM = `import net from 'node:net';import {hookStats} from 'smc-run';const s=net.createServer(c=>c.end('ok')).listen(0,'127.0.0.1',()=>net.connect(s.address().port,'127.0.0.1').on('data',d=>{console.log(String(d),hookStats()?.smc??'no-hook');s.close()}));`;

/** compares dotted version numbers given as arrays */
function cmp(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

describe('npm package', () => {
  let dir: string;
  let tarball: string;
  /** no compiler: a PATH with node, npm and npx only, and CC/CXX that fail */
  let noCompiler: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-pack-'));
    // npm pack with its scripts (prepack: dist + prebuilds) in a copy of the repo: rebuilding dist/ in
    // place would rewrite files that the other test files' programs are loading at the same time. The
    // copy reuses prebuilds/ and their stamps, so unchanged sources are not compiled again.
    const copy = path.join(dir, 'repo');
    fs.mkdirSync(path.join(copy, 'build'), { recursive: true });
    const copied = await sh(
      `tar --exclude=./node_modules --exclude=./.git --exclude=./dist --exclude=./build --exclude=./test-results -cf - . | tar -xf - -C "${copy}" && ` +
        `for f in build/prebuild-*.stamp; do [ ! -e "$f" ] || cp "$f" "${copy}/build/"; done && ln -s "${REPO}/node_modules" "${copy}/node_modules"`,
      REPO,
    );
    expect(copied.code, copied.stderr).toBe(0);
    const packed = await sh(`npm pack --pack-destination "${dir}"`, copy, {}, 600_000);
    expect(packed.code, packed.stderr).toBe(0);
    fs.rmSync(copy, { recursive: true, force: true });
    tarball = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.tgz')) ?? 'none.tgz');
    // every command of this PATH except compilers, assemblers, linkers and make
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    for (const d of [path.dirname(process.execPath), ...(process.env.PATH ?? '').split(':')]) {
      let names: string[] = [];
      try {
        names = fs.readdirSync(d);
      } catch {}
      for (const n of names) {
        if (COMPILER.test(n) || fs.existsSync(path.join(bin, n))) continue;
        fs.symlinkSync(path.join(d, n), path.join(bin, n));
      }
    }
    noCompiler = { PATH: bin, CC: '/bin/false', CXX: '/bin/false' };
  }, 600_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const project = (name: string): string => {
    const app = path.join(dir, name);
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), `{"name":"${name}","version":"1.0.0","private":true}`);
    fs.writeFileSync(path.join(app, 'app.cjs'), CJS);
    fs.writeFileSync(path.join(app, 'app.mjs'), ESM);
    return app;
  };

  it('ships the built JS, the prebuilt addons, the addon sources and the CLI, nothing else, in <= 1.25 MiB', async () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(files).toContain('package/bin/smc-run');
    expect(files).toContain('package/dist/preload.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files).toContain('package/native/addon/socket.cc');
    expect(files).toContain('package/binding.gyp');
    expect(files.filter((f) => f.startsWith('package/prebuilds/')).sort()).toEqual(PREBUILT.flatMap((a) => PREBUILT_FILES.map((f) => `package/prebuilds/linux-${a}/${f}`)).sort());
    expect(files).toContain('package/native/preload/smc-preload.c');
    expect(files.filter((f) => /package\/(test|src|build|scripts|node_modules)\//.test(f))).toEqual([]);
    // each arch's BPF loader links libbpf, libelf and zlib statically: about 0.2 MB of the tarball each
    expect(fs.statSync(tarball).size).toBeLessThanOrEqual(1.25 * MiB);
  });

  it('each prebuild (addon, LD_PRELOAD library) is for its architecture, stripped, and needs no glibc newer than 2.28 (RHEL 8); the BPF loader none newer than 2.34', async () => {
    const out = path.join(dir, 'unpacked');
    fs.mkdirSync(out);
    execFileSync('tar', ['-xzf', tarball, '-C', out]);
    const machine: Record<string, number> = { x64: 62, arm64: 183, s390x: 22 }; // EM_X86_64, EM_AARCH64, EM_S390
    for (const arch of PREBUILT) for (const name of PREBUILT_FILES) {
      const file = path.join(out, 'package', 'prebuilds', `linux-${arch}`, name);
      expect(elfMachine(file), arch).toBe(machine[arch]);
      expect(execFileSync('objdump', ['-t', file], { encoding: 'utf8' }), `${arch} is stripped`).toMatch(/no symbols/);
      // versioned dynamic symbols, e.g. "(GLIBC_2.14) memcpy": the highest glibc and libstdc++ versions
      const dyn = execFileSync('objdump', ['-T', file], { encoding: 'utf8' });
      const versions = (prefix: string) => [...dyn.matchAll(new RegExp(`\\b${prefix}_([0-9.]+)\\b`, 'g'))].map((m) => (m[1] as string).split('.').map(Number));
      const max = (vs: number[][]) => vs.reduce((a, b) => (cmp(a, b) >= 0 ? a : b), [0]);
      const glibc = versions('GLIBC');
      expect(glibc.length, arch).toBeGreaterThan(0);
      // the BPF switch needs Linux 6.11+: every distribution with such a kernel has glibc 2.34+ (its start code)
      const floor = name === 'smc-bpf' ? [2, 34] : [2, 28];
      expect(max(glibc).join('.'), `${arch} ${name}: highest GLIBC symbol`).toSatisfy((v: string) => cmp(v.split('.').map(Number), floor) <= 0);
      // libstdc++ of GCC 8 (RHEL 8) is GLIBCXX_3.4.25
      expect(max(versions('GLIBCXX')).join('.'), `${arch}: highest GLIBCXX symbol`).toSatisfy((v: string) => cmp(v.split('.').map(Number), [3, 4, 25]) <= 0);
    }
  });

  it('has no install script: none in package.json, and npm adds none for binding.gyp (gypfile: false)', async () => {
    const pkg = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as { scripts: Record<string, string>; gypfile: boolean };
    for (const s of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts[s]).toBeUndefined();
    expect(pkg.gypfile).toBe(false);
  });

  it('this machine has no compiler in the consumer environment', async () => {
    const r = await sh('for c in cc gcc c++ g++ clang make ld as x86_64-linux-gnu-gcc; do command -v $c; done; echo checked', dir, noCompiler);
    expect(r.stdout.trim()).toBe('checked');
  });

  for (const [mode, flags] of [
    ['--ignore-scripts', ['--ignore-scripts']],
    ['--strict-allow-scripts=true', ['--strict-allow-scripts=true', '--foreground-scripts']],
  ] as const) {
    it(`installs with ${mode} and no compiler; the prebuilt addon adopts sockets for CJS and ESM consumers`, async () => {
      const app = project(`app-${mode.replace(/\W+/g, '')}`);
      const inst = await sh(`npm install --no-save ${flags.join(' ')} "${tarball}"`, app, noCompiler);
      expect(inst.code, inst.stderr).toBe(0);
      expect(inst.stderr).not.toMatch(/install-scripts|allowScripts/i);
      const pkgDir = path.join(app, 'node_modules', 'smc-run');
      expect(fs.existsSync(path.join(pkgDir, 'build'))).toBe(false);
      for (const file of ['app.cjs', 'app.mjs']) {
        const r = await sh(`npx smc-run node ${file}`, app, { ...noCompiler, SMC_RUN_SOCKET_FAMILY: 'inet' });
        expect(r.stderr, file).toBe('');
        expect(r.stdout.trim(), file).toBe('ok 2');
      }
      const doctor = await sh('npx smc-run doctor --json', app, noCompiler);
      const addon = (JSON.parse(doctor.stdout) as { checks: { id: string; status: string }[] }).checks.find((c) => c.id === 'node.addon');
      expect(addon?.status).toBe('ok');
    });
  }

  it('installs globally with --ignore-scripts and no compiler; the smc-run command adopts sockets', async () => {
    const prefix = path.join(dir, 'global');
    const inst = await sh(`npm install -g --prefix "${prefix}" --ignore-scripts "${tarball}"`, dir, noCompiler);
    expect(inst.code, inst.stderr).toBe(0);
    fs.writeFileSync(path.join(dir, 'global-app.cjs'), CJS);
    const r = await sh(`"${prefix}/bin/smc-run" node global-app.cjs`, dir, { ...noCompiler, NODE_PATH: path.join(prefix, 'lib', 'node_modules'), SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('ok 2');
    // the BPF switch's prebuilt loader answers (what this kernel allows), with no compiler and no libbpf
    const st = await sh(`"${prefix}/bin/smc-run" status --json`, dir, noCompiler);
    expect(st.code, st.stderr).toBe(0);
    expect(JSON.parse(st.stdout)).toMatchObject({ kernel: { kernel: expect.any(String), btf: expect.any(Boolean), hook: expect.any(Boolean) }, loaded: expect.any(Boolean) });
  });

  it('where no prebuild fits (musl), one notice names the command that builds from source, and that command works', async () => {
    const app = project('nomatch');
    const inst = await sh(`npm install --no-save --ignore-scripts "${tarball}"`, app, noCompiler);
    expect(inst.code, inst.stderr).toBe(0);
    // node-gyp-build reads LIBC: the glibc prebuilds do not match a musl system
    const r = await sh('npx smc-run node app.cjs', app, { ...noCompiler, LIBC: 'musl', SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('ok no-hook');
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/native addon unavailable \(no prebuilt addon for linux-\w+ \(musl; prebuilt: linux x64, arm64, s390x with glibc\) and none built from source\): running on plain TCP; fix: build it from source: npm run build:native --prefix \S+ \(needs python3, make, g\+\+\)$/);
    const cmd = /build it from source: (npm run build:native --prefix \S+)/.exec(lines[0] ?? '')?.[1] ?? '';
    expect(cmd).toBe(`npm run build:native --prefix ${fs.realpathSync(path.join(app, 'node_modules', 'smc-run'))}`);
    // without a compiler the command fails; with the host's toolchain it builds, and the addon loads
    const failed = await sh(cmd, app, noCompiler);
    expect(failed.code).not.toBe(0);
    const nodedir = path.resolve(process.execPath, '..', '..');
    const built = await sh(cmd, app, { npm_config_nodedir: nodedir });
    expect(built.code, built.stderr).toBe(0);
    const after = await sh('npx smc-run node app.cjs', app, { ...noCompiler, LIBC: 'musl', SMC_RUN_SOCKET_FAMILY: 'inet' });
    expect(after.stderr).toBe('');
    expect(after.stdout.trim()).toBe('ok 2');
  });
});
