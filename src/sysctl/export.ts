// net.smc settings as the files that apply them declaratively, where they belong: a container's
// namespace at creation (OCI runtime spec linux.sysctl, Kubernetes pod securityContext.sysctls) or the
// host's initial namespace at boot (sysctl.d), or podman's command line (podman run --sysctl). Values arrive validated and in kernel form ("65536",
// never "64k"): runtimes write them to /proc/sys verbatim.

export type ExportFormat = 'oci' | 'k8s' | 'sysctl.d' | 'podman';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['oci', 'k8s', 'sysctl.d', 'podman'];

export interface ExportEntry {
  /** net.smc.NAME */
  key: string;
  /** the text the kernel is given */
  text: string;
}

/** OCI runtime spec fragment to merge into config.json: {"linux":{"sysctl":{...}}} (values are strings there). */
function oci(entries: readonly ExportEntry[]): string {
  const sysctl = Object.fromEntries(entries.map((e) => [e.key, e.text]));
  return `${JSON.stringify({ linux: { sysctl } }, null, 2)}\n`;
}

/**
 * Kubernetes pod spec fragment. Values are strings in the API, so every one is quoted; JSON string
 * syntax is valid YAML double-quoted syntax, which keeps any character safe.
 */
function k8s(entries: readonly ExportEntry[]): string {
  const lines = [
    "# net.smc.* sysctls are namespaced but not on Kubernetes' safe list: each node's kubelet needs --allowed-unsafe-sysctls 'net.smc.*'",
    '# goes under the pod spec (spec.securityContext)',
    'securityContext:',
  ];
  if (entries.length === 0) lines.push('  sysctls: []');
  else {
    lines.push('  sysctls:');
    for (const e of entries) lines.push(`    - name: ${e.key}`, `      value: ${JSON.stringify(e.text)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A file for /etc/sysctl.d/: the host's initial namespace at boot; containers do not inherit it. */
function sysctlD(entries: readonly ExportEntry[]): string {
  const lines = [
    '# net.smc sysctls, e.g. /etc/sysctl.d/90-smc.conf; applied at boot to the initial network namespace only',
    ...entries.map((e) => `${e.key} = ${e.text}`),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * podman run / podman create options, one per line: `podman run $(smc-run sysctl export --format podman ...)`.
 * No comment line: the shell would pass it on as arguments. Kernel values hold no blanks, and podman splits
 * KEY=VALUE at the first '='.
 */
function podman(entries: readonly ExportEntry[]): string {
  return entries.map((e) => `--sysctl=${e.key}=${e.text}\n`).join('');
}

export function formatExport(format: ExportFormat, entries: readonly ExportEntry[]): string {
  switch (format) {
    case 'oci':
      return oci(entries);
    case 'k8s':
      return k8s(entries);
    case 'sysctl.d':
      return sysctlD(entries);
    case 'podman':
      return podman(entries);
  }
}
