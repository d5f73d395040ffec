// smc-run enable | disable | status on the host: the contract (usage errors exit 2, operational ones 1,
// one line each, --json errors as an object), what the loader reports about this kernel, and that a
// refused enable leaves nothing loaded. Switching sockets needs a kernel with SMC: test/kernel/smcr.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_HAS_SMC } from '../helpers/host-smc';
import { smcRun } from '../helpers/run';

const lines = (s: string): string[] => s.split('\n').filter(Boolean);
const jsonError = (stdout: string): { code: string; message: string } => (JSON.parse(stdout) as { error: { code: string; message: string } }).error;

describe('smc-run enable | disable | status (host)', () => {
  // a network namespace of our own, held by a sleeping process: --target PID names it
  let holder: ChildProcess;
  beforeAll(async () => {
    holder = spawn('unshare', ['-n', 'sleep', '600'], { stdio: 'ignore' });
    const own = fs.statSync('/proc/self/ns/net').ino;
    for (let i = 0; i < 100; i++) {
      try {
        if (fs.statSync(`/proc/${holder.pid}/ns/net`).ino !== own) return;
      } catch { /* not started yet */ }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('unshare -n did not start');
  });
  afterAll(() => { holder.kill('SIGKILL'); });

  it('status: what this kernel allows, as a table line and as JSON', async () => {
    const r = await smcRun(['status', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const st = JSON.parse(r.stdout) as { kernel: { kernel: string; btf: boolean; hook: boolean; hsCtrl: boolean }; possible: boolean; loaded: boolean; namespaces: unknown[] };
    expect(st.kernel.kernel).toBe(os.release());
    expect(st.kernel.btf).toBe(fs.existsSync('/sys/kernel/btf/vmlinux'));
    expect(st.possible).toBe(st.kernel.btf && st.kernel.hook);
    expect(st).toMatchObject({ loaded: false, namespaces: [] });
    const t = await smcRun(['status']);
    expect(t.code, t.stderr).toBe(0);
    expect(lines(t.stdout)).toEqual([expect.stringMatching(new RegExp(`^kernel ${os.release().replace(/[.+]/g, '\\$&')}: BPF switch (possible|not possible \\(.+\\)); destination policy: .+$`)), 'no namespace is switched']);
  });

  it('doctor names the mechanism for the namespace: the BPF switch, or the launcher only, and why', async () => {
    const d = await smcRun(['doctor', '--json', '--no-selftest']);
    const check = (JSON.parse(d.stdout) as { checks: { id: string; status: string; message: string; fix?: string }[] }).checks.find((c) => c.id === 'mechanism.bpf_switch');
    if (!HOST_HAS_SMC) expect(check).toMatchObject({ status: 'info', message: expect.stringMatching(/^the BPF switch is not possible on this kernel \(.+: (no BTF|no update_socket_protocol hook, Linux 6\.6\+|no IPPROTO_SMC sockets: Linux 6\.11\+ with CONFIG_SMC)\): only programs started by the launcher/) });
    else expect(check?.message).toMatch(/BPF switch/);
    const none = await smcRun(['doctor', '--json', '--no-selftest'], { SMC_RUN_BPF_LOADER: '/nonexistent/smc-bpf' });
    const missing = (JSON.parse(none.stdout) as { checks: { id: string; message: string }[] }).checks.find((c) => c.id === 'mechanism.bpf_switch');
    expect(missing?.message).toMatch(/^the BPF switch is not built for this machine: only programs started by the launcher/);
  });

  it('usage errors exit 2 with one line: no namespace, --host with --target, own namespace without --host, disable --all with a namespace, a malformed rule, an empty rule list, too many rules', async () => {
    const cases: [string[], RegExp][] = [
      [['enable'], /name a namespace: --target PID, --netns PATH\|NAME, or --host/],
      [['enable', '--host', '--target', String(holder.pid)], /give it alone/],
      [['enable', '--target', String(process.pid)], /this host's own network namespace .*add --host to mean it/],
      [['disable', '--all', '--host'], /disable --all: no namespace with it/],
      [['enable', '--target', String(holder.pid), '--include', '10.0.0.0/33'], /.+/],
      // an empty value would switch the whole namespace and clear its policy: refused
      [['enable', '--target', String(holder.pid), '--include', ''], /--include needs at least one CIDR\[:PORT\] \(given: ""\)/],
      // the kernel's policy holds 16 rules: more is a usage error before anything is asked of the kernel
      [['enable', '--target', String(holder.pid), '--exclude', Array.from({ length: 17 }, (_, i) => `10.0.${i}.0/24`).join(',')], /at most 16 rules .*not 17/],
    ];
    for (const [args, msg] of cases) {
      const r = await smcRun(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(lines(r.stderr), args.join(' ')).toEqual([expect.stringMatching(msg)]);
      const j = await smcRun([...args, '--json']);
      expect(j.code).toBe(2);
      expect(jsonError(j.stdout).code, args.join(' ')).toMatch(/^E[A-Z]+$/);
    }
  });

  it('operational errors exit 1 with one line: a namespace that is not there, a destination policy on a kernel without smc_hs_ctrl, no loader', async () => {
    const gone = await smcRun(['enable', '--netns', 'smc-run-no-such-netns']);
    expect(gone.code).toBe(1);
    expect(lines(gone.stderr)).toHaveLength(1);
    const rules = await smcRun(['enable', '--target', String(holder.pid), '--include', '10.0.0.0/8', '--json']);
    expect(rules.code).toBe(1);
    expect(jsonError(rules.stdout)).toMatchObject({ code: 'ENOTSUP', message: expect.stringMatching(/--include\/--exclude: this kernel .*smc_hs_ctrl/) });
    const noLoader = await smcRun(['status'], { SMC_RUN_BPF_LOADER: '/nonexistent/smc-bpf' });
    expect(noLoader.code).toBe(1);
    expect(lines(noLoader.stderr)).toEqual([expect.stringMatching(/^smc-run: the BPF switch is not built for this machine .*npm run build/)]);
    // a loader of another architecture (a checkout shared with a guest of another one): as if none
    const foreign = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-bpf-')), 'smc-bpf');
    const elf = fs.readFileSync(process.execPath).subarray(0, 64);
    const other = Buffer.from(elf);
    if (other[5] === 2) other.writeUInt16BE(other.readUInt16BE(18) === 22 ? 62 : 22, 18);
    else other.writeUInt16LE(other.readUInt16LE(18) === 62 ? 183 : 62, 18);
    fs.writeFileSync(foreign, other, { mode: 0o755 });
    try {
      const wrong = await smcRun(['status', '--json'], { SMC_RUN_BPF_LOADER: foreign });
      expect(wrong.code).toBe(1);
      expect(jsonError(wrong.stdout)).toMatchObject({ code: 'ENOTSUP', message: expect.stringMatching(/^the BPF switch is not built for this machine \(linux-\w+\)/) });
    } finally {
      fs.rmSync(path.dirname(foreign), { recursive: true, force: true });
    }
  });

  it(`enable on a namespace ${HOST_HAS_SMC ? 'of a kernel with SMC' : 'without SMC (this kernel)'}: ${HOST_HAS_SMC ? 'on then off, or refused in one line (no BTF, no bpf(), no permission)' : 'ENOSMC'}, nothing left loaded; disable of a namespace never enabled says so`, async () => {
    const r = await smcRun(['enable', '--target', String(holder.pid), '--json']);
    if (!HOST_HAS_SMC) {
      expect(r.code).toBe(1);
      expect(jsonError(r.stdout)).toMatchObject({ code: 'ENOSMC' });
      const t = await smcRun(['enable', '--target', String(holder.pid)]);
      expect(lines(t.stderr)).toEqual([expect.stringMatching(/^smc-run: .*IPPROTO_SMC/)]);
    } else if (r.code === 0) {
      expect(JSON.parse(r.stdout)).toMatchObject({ enabled: true, namespace: { inode: fs.statSync(`/proc/${holder.pid}/ns/net`).ino } });
      const off = await smcRun(['disable', '--target', String(holder.pid), '--json']);
      expect(JSON.parse(off.stdout)).toMatchObject({ enabled: false, was: true, left: 0 });
    } else {
      // a kernel with SMC that refuses BPF here (no CAP_BPF, a locked-down host): one line says which
      expect(r.code).toBe(1);
      expect(jsonError(r.stdout).code).toMatch(/^E(PERM|ACCES|NOTSUP)$/);
    }
    const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as { loaded: boolean };
    expect(st.loaded).toBe(false);
    expect(fs.existsSync('/sys/fs/bpf/smc-run/link')).toBe(false);
    const off = await smcRun(['disable', '--target', String(holder.pid), '--json']);
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ enabled: false, was: false });
    const text = await smcRun(['disable', '--target', String(holder.pid)]);
    expect(lines(text.stdout)).toEqual([expect.stringMatching(/^already off: .*net:\[\d+\]/)]);
    const all = await smcRun(['disable', '--all', '--json']);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ removed: 0 });
  });
});
