// smc-run enable | disable | status: the BPF switch, whole network namespaces on SMC from the kernel.
// In an enabled namespace every TCP stream socket a program creates from then on is an IPPROTO_SMC socket
// (any program: Go, static binaries, a container's processes already running; sockets open before stay
// TCP). SMC's own fallback keeps every connection TCP would have made: a peer without SMC gets TCP.
//
// The host's own namespace (the one smc-run runs in) only with --host: switching it reaches every
// program of the machine. Destination policy (--include/--exclude) is decided in the kernel per
// connection, in the TCP handshake (struct smc_hs_ctrl, Linux 6.19+: native/bpf/smc-policy.bpf.c); on older
// kernels a policy is refused rather than ignored (the launcher's --include/--exclude decide in the process).
import * as fs from 'node:fs';
import type { Argv } from 'yargs';
import { encodePolicy, kernelRuleText, type KernelPolicy } from '../bpf/policy';
import { disableAll, disableCgroup, disableNamespace, enableCgroup, enableNamespace, probeKernel, switchImpossible, switchStatus } from '../bpf/switch';
import { cgroupPath, unitCgroup, unitOfCgroup } from '../bpf/cgroup';
import { withNetns, type NetnsHandle } from '../netns';
import { parseRules } from '../policy/rules';
import { netnsMembers } from '../proc/netns-members';
import { allRecords, type HookRecord } from '../oci/records';
import type { RegisterCommand } from './commands';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './errors';
import { printJson, targetOf, withJson, withTarget } from './options';
import { renderTable } from './table';

interface Where { target?: number | undefined; netns?: string | undefined; host: boolean; cgroup?: string | undefined; unit?: string | undefined }

const OWN_NETNS = '/proc/self/ns/net';

/** The namespace a command acts on, checked against the --host rule; fn gets it open. */
function withChosenNetns<T>(args: Where, verb: string, fn: (ns: NetnsHandle, host: boolean) => T): T {
  const named = args.target !== undefined || args.netns !== undefined;
  if (!named && !args.host) throw new CliError('EUSAGE', `${verb}: name a namespace: --target PID, --netns PATH|NAME, or --host for the one smc-run runs in`, EXIT_USAGE);
  if (named && args.host) throw new CliError('EUSAGE', `${verb}: --host is the namespace smc-run runs in: give it alone, not with --target/--netns`, EXIT_USAGE);
  const target = args.host ? { netns: OWN_NETNS } : targetOf(args);
  return withNetns(target, (ns) => {
    if (ns === undefined) throw new CliError('EINTERNAL', 'no namespace opened');
    const own = fs.statSync(OWN_NETNS).ino === ns.inode;
    if (own && !args.host && verb === 'enable') {
      throw new CliError('EUSAGE', `${ns.label} is this host's own network namespace (the one smc-run runs in): enabling it switches every program here; add --host to mean it`, EXIT_USAGE);
    }
    return fn(ns, own);
  });
}

const describeNs = (ns: NetnsHandle, host: boolean): string => (host ? `this host's namespace (net:[${ns.inode}])` : `${ns.label} (net:[${ns.inode}])`);

interface EnableArgs extends Where { include?: string[]; exclude?: string[]; json: boolean }

/** The kernel policy of --include/--exclude (undefined: none given); usage errors before anything runs. */
function policyOf(args: EnableArgs): Buffer | undefined {
  for (const [name, given] of [['--include', args.include], ['--exclude', args.exclude]] as const) {
    // an empty value (an unset variable: --include "$NETS") would switch the whole namespace: refused
    const empty = given?.find((v) => !/[0-9A-Za-z:.*]/.test(v));
    if (empty !== undefined) throw new CliError('EUSAGE', `${name} needs at least one CIDR[:PORT] (given: "${empty}")`, EXIT_USAGE);
  }
  const include = parseRules((args.include ?? []).join(','));
  const exclude = parseRules((args.exclude ?? []).join(','));
  if (include.length + exclude.length === 0) return undefined;
  let policy: Buffer;
  try {
    policy = encodePolicy(include, exclude);
  } catch (e) {
    throw new CliError('EUSAGE', `--include/--exclude: ${(e as Error).message}`, EXIT_USAGE);
  }
  const k = probeKernel();
  if (!k.hsCtrl) {
    throw new CliError('ENOTSUP', `--include/--exclude: this kernel (${k.kernel}) can't decide per destination in the kernel (that needs smc_hs_ctrl, Linux 6.19+): enable the whole namespace (no rules), or use the launcher's --include/--exclude`);
  }
  return policy;
}

const policyText = (p: KernelPolicy): string =>
  [...p.include.map((r) => `include ${kernelRuleText(r)}`), ...p.exclude.map((r) => `exclude ${kernelRuleText(r)}`)].join(', ');

/** --cgroup PATH or --unit NAME: the cgroup directory (undefined: a namespace is named instead). */
function chosenCgroup(args: Where, verb: string): string | undefined {
  if (args.cgroup === undefined && args.unit === undefined) return undefined;
  if (args.cgroup !== undefined && args.unit !== undefined) throw new CliError('EUSAGE', `${verb}: --cgroup or --unit, not both`, EXIT_USAGE);
  if (args.target !== undefined || args.netns !== undefined || args.host) throw new CliError('EUSAGE', `${verb}: a cgroup scope (--cgroup/--unit) or a namespace (--target/--netns/--host), not both`, EXIT_USAGE);
  return args.unit !== undefined ? unitCgroup(args.unit) : cgroupPath(args.cgroup!);
}

function enableByCgroup(args: EnableArgs, dir: string): void {
  const policy = policyOf(args);
  const r = enableCgroup(dir, policy);
  if (args.json) printJson({ enabled: true, already: r.already, policy: r.policy, cgroup: { path: dir, id: r.cgroup } });
  else {
    const rules = r.policy ? '; the kernel decides each connection by --include/--exclude in its TCP handshake (here and in the namespaces its tasks are in now)' : '';
    process.stdout.write(`${r.already ? 'already on' : 'on'}: cgroup ${dir}: TCP sockets its tasks (and those below it) create from now on open as SMC, in any namespace${rules}\n`);
  }
}

function enable(args: EnableArgs): void {
  const dir = chosenCgroup(args, 'enable');
  if (dir !== undefined) return enableByCgroup(args, dir);
  const policy = policyOf(args);
  withChosenNetns(args, 'enable', (ns, host) => {
    const r = enableNamespace(ns, policy);
    if (args.json) printJson({ enabled: true, already: r.already, policy: r.policy, namespace: { label: host ? 'host' : ns.label, inode: r.inode, cookie: r.cookie } });
    else {
      const rules = r.policy ? '; the kernel decides each connection by --include/--exclude in its TCP handshake (the others go plain TCP, no SMC handshake)' : '';
      process.stdout.write(`${r.already ? 'already on' : 'on'}: ${describeNs(ns, host)}: TCP sockets created there from now on open as SMC (sockets open already stay TCP)${rules}\n`);
    }
  });
}

interface DisableArgs extends Where { all: boolean; json: boolean }

function disable(args: DisableArgs): void {
  if (args.all) {
    if (args.target !== undefined || args.netns !== undefined || args.host) throw new CliError('EUSAGE', 'disable --all: no namespace with it', EXIT_USAGE);
    const r = disableAll();
    if (args.json) printJson(r);
    else process.stdout.write(`off everywhere: ${r.removed} namespace(s) removed, the BPF switch unloaded\n`);
    return;
  }
  const dir = chosenCgroup(args, 'disable');
  if (dir !== undefined) {
    const r = disableCgroup(dir);
    if (args.json) printJson({ enabled: false, was: r.was, switched: r.switched, left: r.left, cgroup: { path: dir, id: r.cgroup } });
    else process.stdout.write(r.was ? `off: cgroup ${dir} (${r.switched} socket(s) were switched)${r.left === 0 ? '; the BPF switch unloaded' : ''}\n` : `already off: cgroup ${dir}\n`);
    return;
  }
  withChosenNetns(args, 'disable', (ns, host) => {
    const r = disableNamespace(ns);
    if (args.json) printJson({ enabled: false, was: r.was, switched: r.switched, left: r.left, namespace: { label: host ? 'host' : ns.label, inode: r.inode, cookie: r.cookie } });
    else if (!r.was) process.stdout.write(`already off: ${describeNs(ns, host)}\n`);
    else process.stdout.write(`off: ${describeNs(ns, host)} (${r.switched} socket(s) were switched; new ones are TCP again)${r.left === 0 ? '; the BPF switch unloaded' : ''}\n`);
  });
}

/** Containers for a table cell: a pod's namespace/name/container where CRI-O named them, else the id. */
const containerText = (cs: { id: string; pod?: HookRecord['pod'] }[]): string =>
  cs.map((c) => (c.pod?.name ? `${c.pod.namespace ?? '-'}/${c.pod.name}${c.pod.container ? `/${c.pod.container}` : ''}` : c.id.slice(0, 12))).join(',') || '-';

function status(args: { json: boolean }): void {
  const kernel = probeKernel();
  const st = switchStatus();
  const members = netnsMembers(new Set(st.namespaces.map((n) => n.inode)));
  // the containers the OCI hook switched, by the scope it recorded for them
  const records = allRecords();
  const containersOf = (match: (r: HookRecord) => boolean): { id: string; pod?: HookRecord['pod'] }[] =>
    records.filter(match).map((r) => (r.pod === undefined ? { id: r.id } : { id: r.id, pod: r.pod }));
  const rows = st.namespaces.map((n) => {
    const m = members.get(n.inode) ?? { names: [], pids: [], commands: [] };
    const containers = containersOf((r) => r.scope.kind === 'netns' && r.scope.cookie === n.cookie);
    return { ...n, names: m.names, pids: m.pids.length, commands: m.commands, live: m.names.length + m.pids.length > 0, containers };
  });
  const cgroups = st.cgroups.map((c) => ({ ...c, containers: containersOf((r) => r.scope.kind === 'cgroup' && r.scope.id === c.id) }));
  const policy = kernel.hsCtrl ? 'in the kernel (smc_hs_ctrl): enable --include/--exclude' : 'none in the kernel (needs smc_hs_ctrl, Linux 6.19+)';
  const impossible = switchImpossible(kernel);
  if (args.json) {
    printJson({ kernel, possible: impossible === undefined, loaded: st.loaded, policyLoaded: st.policyLoaded, namespaces: rows, cgroups });
    return;
  }
  process.stdout.write(`kernel ${kernel.kernel}: BPF switch ${impossible === undefined ? 'possible' : `not possible (${impossible})`}; destination policy: ${policy}\n`);
  if (cgroups.length > 0) {
    process.stdout.write(renderTable(cgroups, [
      { header: 'CGROUP', value: (c) => (c.removed ? `id ${c.id} (removed)` : (c.path ?? `id ${c.id}`)) },
      { header: 'UNIT', value: (c) => unitOfCgroup(c.path) ?? '-' },
      { header: 'CONTAINER', value: (c) => containerText(c.containers) },
      { header: 'SWITCHED', value: (c) => String(c.switched), align: 'right' },
      { header: 'POLICY', value: (c) => (c.policy ? `${policyText(c.policy)} (${c.policy.proposed} proposed SMC, ${c.policy.held} kept TCP)` : '-') },
    ]));
  }
  if (!st.loaded || rows.length === 0) {
    process.stdout.write('no namespace is switched\n');
    return;
  }
  process.stdout.write(renderTable(rows, [
    { header: 'NETNS', value: (r) => `net:[${r.inode}]` },
    { header: 'NAME', value: (r) => r.names.join(',') || '-' },
    { header: 'PROCS', value: (r) => (r.live ? String(r.pids) : 'gone'), align: 'right' },
    { header: 'SWITCHED', value: (r) => String(r.switched), align: 'right' },
    { header: 'POLICY', value: (r) => (r.policy ? `${policyText(r.policy)} (${r.policy.proposed} proposed SMC, ${r.policy.held} kept TCP)` : '-') },
    { header: 'CONTAINERS', value: (r) => containerText(r.containers) },
    { header: 'COMMANDS', value: (r) => r.commands.join(',') || '-' },
  ]));
}

const withWhere = <T>(y: Argv<T>) =>
  withTarget(withJson(y))
    .option('host', { type: 'boolean', default: false, describe: 'the network namespace smc-run runs in (every program of the host)' })
    .option('cgroup', { type: 'string', describe: 'instead of a namespace: the tasks of this cgroup v2 directory and below it (absolute, or under /sys/fs/cgroup)' })
    .option('unit', { type: 'string', describe: 'instead of a namespace: the cgroup of this systemd unit (NAME.service)' });

export const registerSwitch: RegisterCommand = (y: Argv) => {
  y.command('enable', 'BPF switch: every new TCP socket of a network namespace opens as SMC (any program, no restart)', (c) =>
    withWhere(c)
      .option('include', { type: 'string', array: true, describe: 'only connections with these CIDR[:port] propose SMC (peer address, service port; Linux 6.19+)' })
      .option('exclude', { type: 'string', array: true, describe: 'connections with these CIDR[:port] stay plain TCP (peer address, service port; Linux 6.19+)' })
      .example('smc-run enable --netns blue --exclude 10.0.0.5:6379', 'every connection SMC but the one to that Redis')
      .example('smc-run enable --target 4321', "a running container's namespace (the PID of any process in it)")
      .example('smc-run enable --netns blue', 'the namespace ip netns calls blue'),
  (a) => enable(a as unknown as EnableArgs));
  y.command('disable', 'BPF switch off for a namespace (new sockets are TCP again); --all unloads it', (c) =>
    withWhere(c).option('all', { type: 'boolean', default: false, describe: 'every namespace: unload the BPF switch' }),
  (a) => disable(a as unknown as DisableArgs));
  y.command('status', 'BPF switch: what this kernel allows and which namespaces are switched', (c) => withJson(c),
    (a) => status(a as unknown as { json: boolean }));
};
