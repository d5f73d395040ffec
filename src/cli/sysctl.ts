// smc-run sysctl list | get NAME... | set NAME=VALUE... | export --format oci|k8s|sysctl.d|podman [NAME=VALUE...]
// The net.smc.* sysctls of this host or of a container's network namespace (--target PID / --netns).
import type { Argv } from 'yargs';
import {
  listSmcSysctls,
  parseAssignment,
  readSmcSysctls,
  validateForExport,
  writeSmcSysctls,
  type SmcSysctl,
} from '../sysctl';
import { EXPORT_FORMATS, formatExport, type ExportEntry, type ExportFormat } from '../sysctl/export';
import type { NamespaceTarget } from '../netns';
import type { RegisterCommand } from './commands';
import { CliError, EXIT_USAGE } from './errors';
import { printJson, targetOf, withJson, withTarget } from './options';
import { renderTable, type Column } from './table';

interface CommonArgs {
  target: number | undefined;
  netns: string | undefined;
  json: boolean;
}

const COLUMNS: Column<SmcSysctl>[] = [
  { header: 'Name', value: (s) => s.name },
  { header: 'Value', value: (s) => String(s.value), align: 'right' },
  { header: 'Default', value: (s) => (s.default === undefined ? '-' : String(s.default)), align: 'right' },
  { header: 'Meaning', value: (s) => s.meaning ?? '(not known to this smc-run; see the kernel documentation)' },
];

const asStrings = (v: unknown): string[] => (v === undefined ? [] : ([] as unknown[]).concat(v).map(String));

function list(args: CommonArgs): void {
  const sysctls = listSmcSysctls(targetOf(args));
  if (args.json) printJson({ sysctls });
  else process.stdout.write(renderTable(sysctls, COLUMNS));
}

function get(args: CommonArgs & { names: unknown }): void {
  const sysctls = readSmcSysctls(asStrings(args.names), targetOf(args));
  if (args.json) printJson({ sysctls });
  else process.stdout.write(sysctls.map((s) => `${s.key} = ${s.value}\n`).join(''));
}

function set(args: CommonArgs & { assignments: unknown }): void {
  const assignments = asStrings(args.assignments).map(parseAssignment);
  const changes = writeSmcSysctls(assignments, targetOf(args));
  if (args.json) printJson({ changes });
  else process.stdout.write(changes.map((c) => `${c.key}: ${c.old} -> ${c.new}\n`).join(''));
}

function currentEntries(target: NamespaceTarget, all: boolean): ExportEntry[] {
  return listSmcSysctls(target)
    .filter((s) => all || s.isDefault === false)
    .map((s) => ({ key: s.key, text: String(s.value) }));
}

function exportSettings(args: CommonArgs & { assignments: unknown; format: ExportFormat; all: boolean }): void {
  const pairs = asStrings(args.assignments);
  if (pairs.length > 0 && args.all) throw new CliError('EUSAGE', '--all exports the current values: give either --all or NAME=VALUE pairs', EXIT_USAGE);
  const target = targetOf(args);
  const entries = pairs.length > 0 ? validateForExport(pairs.map(parseAssignment), target).map((s) => ({ key: s.key, text: s.text })) : currentEntries(target, args.all);
  const text = formatExport(args.format, entries);
  if (args.json) printJson({ format: args.format, sysctls: Object.fromEntries(entries.map((e) => [e.key, e.text])), text });
  else process.stdout.write(text);
}

function registerActions(y: Argv): Argv {
  return y
    .command('list', 'every net.smc sysctl of the namespace: value, default, meaning', (c) => withTarget(withJson(c)), (a) => list(a as unknown as CommonArgs))
    .command('get <names..>', 'the value of each named sysctl', (c) =>
      withTarget(withJson(c)).positional('names', { type: 'string', array: true, describe: 'autocorking_size or net.smc.autocorking_size' }),
    (a) => get(a as unknown as CommonArgs & { names: unknown }))
    .command('set <assignments..>', 'set sysctls, all or nothing (all are checked first; if the kernel refuses one, those written before it are restored); prints old -> new', (c) =>
      withTarget(withJson(c))
        .positional('assignments', { type: 'string', array: true, describe: 'NAME=VALUE; sizes as 65536, 64k or 1M' })
        .example('smc-run sysctl set wmem=1M rmem=1M', 'faster SMC-D bulk transfers in this namespace')
        .example('smc-run sysctl set --target 4321 autocorking_size=0', "in a container's namespace (that of PID 4321)"),
    (a) => set(a as unknown as CommonArgs & { assignments: unknown }))
    .command('export [assignments..]', 'print the settings as an OCI spec fragment, a Kubernetes pod fragment, a sysctl.d file or podman options', (c) =>
      withTarget(withJson(c))
        .positional('assignments', { type: 'string', array: true, describe: 'NAME=VALUE pairs to export instead of the current non-default values' })
        .option('format', { choices: EXPORT_FORMATS, demandOption: true, describe: 'oci (config.json linux.sysctl), k8s (pod securityContext.sysctls), sysctl.d, podman (podman run --sysctl options)' })
        .option('all', { type: 'boolean', default: false, describe: 'export every current value, defaults too' })
        .example('smc-run sysctl export --format k8s wmem=1M rmem=1M', 'a pod fragment for fast SMC-D bulk transfers')
        .example('smc-run sysctl export --format oci --target 4321', "a container's non-default values")
        .example('podman run $(smc-run sysctl export --format podman autocorking_size=0) IMAGE', 'a podman container with SMC autocorking off'),
    (a) => exportSettings(a as unknown as CommonArgs & { assignments: unknown; format: ExportFormat; all: boolean }))
    .demandCommand(1, 'name an action: list, get, set or export')
    .epilog(
      'net.smc sysctls belong to a network namespace, not to a process: a change applies to every SMC socket created afterwards ' +
        'in that namespace (the host, or the container of --target PID). For one program use the launcher\'s -t/-r instead. ' +
        'Writing needs CAP_NET_ADMIN over the namespace; entering another namespace needs CAP_SYS_ADMIN.',
    );
}

export const registerSysctl: RegisterCommand = (y: Argv) => {
  y.command('sysctl', 'net.smc.* sysctls of this host or a container: list, get, set, export', registerActions);
};
