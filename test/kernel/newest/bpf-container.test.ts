// A running container switched from the host (lane smcd-newest: its kernel has BTF and cgroup2), under
// crun with an OCI bundle and under podman (which runs it through crun): the container's first process is
// a plain Node program (no smc-run, no preload, nothing in its environment) that is already running when `smc-run enable --target <its PID>` switches its network
// namespace; the listener it opens afterwards is an SMC socket, and a client outside (the launcher's)
// meets it over SMC-D on both ends. The guest's own namespace stays unswitched.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerNet, crun, guestRootfs, podman, type ContainerNet, type Runtime } from '../../helpers/container';
import { echoClient, startEchoServer, waitForConns, type EchoServer } from '../../helpers/echo';
import { EXPECT_MODE, smcRun } from '../../helpers/run';

const SLOW = 600_000;

const RUNTIMES: { name: string; subnet: string; setup: (rootfs: string, net: ContainerNet, state: string) => Runtime }[] = [
  { name: 'crun', subnet: '10.77.42', setup: (rootfs, net, state) => crun({ rootfs, net, sysctl: {}, bundles: state }) },
  { name: 'podman', subnet: '10.77.43', setup: (rootfs, net, state) => podman({ rootfs, net, sysctlArgs: [], state }) },
];

describe.runIf(EXPECT_MODE === 'smcd')('containers switched from the host', () => {
  describe.each(RUNTIMES)('a running $name container enabled by --target <container PID>', ({ name, subnet, setup }) => {
    const id = `smcrun-bpfctr-${name}-${process.pid}`;
    let rootfs: Awaited<ReturnType<typeof guestRootfs>>;
    let net: ContainerNet;
    let state = '';
    let rt: Runtime;
    let server: EchoServer | undefined;
    let ctrPid = 0;

    beforeAll(async () => {
      rootfs = await guestRootfs();
      net = await containerNet(`smcrun-bpf-${name}`, subnet);
      state = fs.mkdtempSync(path.join(os.tmpdir(), `smc-run-bpfctr-${name}-`));
      rt = setup(rootfs.dir, net, state);
    }, SLOW);

    afterAll(async () => {
      await smcRun(['disable', '--all']);
      await rt?.remove(id);
      await server?.stop();
      await rt?.settled();
      await net?.remove();
      await rootfs?.remove();
      fs.rmSync(state, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    }, SLOW);

    it('the program was running before enable; its new listener is SMC-D to a client outside', async () => {
      // argv: plain `node echo.cjs late-server` as the container's first process (it listens on SIGUSR2)
      const started = startEchoServer(net.ctrIp, { launcher: false, role: 'late-server', command: (argv) => rt.command(id, argv), startTimeoutMs: 240_000 });
      started.catch(() => undefined); // awaited below; a failure before then is reported there
      for (let i = 0; i < 2400 && ctrPid === 0; i++) {
        try {
          const pid = await rt.pid(id);
          if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('late-server')) ctrPid = pid;
        } catch { /* not created yet */ }
        if (ctrPid === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ctrPid).toBeGreaterThan(0);
      const env = fs.readFileSync(`/proc/${ctrPid}/environ`, 'utf8');
      expect(env).not.toMatch(/SMC_RUN|LD_PRELOAD|NODE_OPTIONS/);

      const r = await smcRun(['enable', '--target', String(ctrPid), '--json']);
      expect(r.code, `${r.stderr}${r.stdout}`).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ enabled: true, namespace: { inode: fs.statSync(net.path).ino } });
      process.kill(ctrPid, 'SIGUSR2');
      server = await started;

      const c = await echoClient(net.ctrIp, server.port, 1 << 20);
      expect(c.result?.ok, c.run.stderr).toBe(true);
      expect(c.result?.client).toMatchObject({ mode: 'smcd', fallback: null });
      const conns = await waitForConns(server, 1);
      expect(conns[0]).toMatchObject({ mode: 'smcd', fallback: null });

      // status names the container's namespace with the container's process; the guest's is not switched
      const st = JSON.parse((await smcRun(['status', '--json'])).stdout) as { namespaces: { inode: number; switched: number; pids: number; commands: string[] }[] };
      const own = fs.statSync('/proc/self/ns/net').ino;
      expect(st.namespaces.map((n) => n.inode)).toEqual([fs.statSync(net.path).ino]);
      expect(st.namespaces[0]).toMatchObject({ switched: 1, pids: expect.any(Number) });
      expect(st.namespaces.some((n) => n.inode === own)).toBe(false);
    }, SLOW);
  });
});
