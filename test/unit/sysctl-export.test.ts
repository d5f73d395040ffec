// The export formats, parsed back with real parsers: what a runtime, kubectl or systemd-sysctl reads.
import { describe, expect, it } from 'vitest';
import { Pod } from 'kubernetes-models/v1';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { formatExport, type ExportEntry } from '../../src/sysctl/export';

const ENTRIES: ExportEntry[] = [
  { key: 'net.smc.wmem', text: '1048576' },
  { key: 'net.smc.autocorking_size', text: '0' },
  { key: 'net.smc.hs_ctrl', text: '' },
];

/** sysctl.d syntax as systemd-sysctl reads it: comments, then "key = value" lines. */
function parseSysctlD(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '' || /^\s*[#;]/.test(line)) continue;
    const m = /^\s*([^=\s]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) throw new Error(`not a sysctl.d line: ${line}`);
    out[m[1] as string] = m[2] as string;
  }
  return out;
}

describe('export', () => {
  it('OCI: a linux.sysctl object of strings', () => {
    const spec = JSON.parse(formatExport('oci', ENTRIES));
    expect(spec).toEqual({ linux: { sysctl: { 'net.smc.wmem': '1048576', 'net.smc.autocorking_size': '0', 'net.smc.hs_ctrl': '' } } });
    expect(JSON.parse(formatExport('oci', []))).toEqual({ linux: { sysctl: {} } });
  });

  it('Kubernetes: securityContext.sysctls with string values and the kubelet hint', () => {
    const text = formatExport('k8s', ENTRIES);
    expect(text).toMatch(/^# .*--allowed-unsafe-sysctls 'net\.smc\.\*'/);
    const docs = parseAllDocuments(text);
    expect(docs).toHaveLength(1);
    expect(docs[0]?.errors).toEqual([]);
    const pod = parseYaml(text) as { securityContext: { sysctls: { name: string; value: unknown }[] } };
    expect(pod.securityContext.sysctls).toEqual([
      { name: 'net.smc.wmem', value: '1048576' },
      { name: 'net.smc.autocorking_size', value: '0' },
      { name: 'net.smc.hs_ctrl', value: '' },
    ]);
    // every value a string, as the Kubernetes API requires (an unquoted 0 would be a number)
    for (const s of pod.securityContext.sysctls) expect(typeof s.value).toBe('string');
    expect(parseYaml(formatExport('k8s', []))).toEqual({ securityContext: { sysctls: [] } });
  });

  it('Kubernetes: odd characters in a value stay one string', () => {
    const text = formatExport('k8s', [{ key: 'net.smc.hs_ctrl', text: 'a: "b" # c' }]);
    expect((parseYaml(text) as { securityContext: { sysctls: { value: string }[] } }).securityContext.sysctls[0]?.value).toBe('a: "b" # c');
  });

  it('sysctl.d: a comment and key = value lines', () => {
    const text = formatExport('sysctl.d', ENTRIES);
    expect(text.split('\n')[0]).toMatch(/^# .*initial network namespace/);
    expect(parseSysctlD(text)).toEqual({ 'net.smc.wmem': '1048576', 'net.smc.autocorking_size': '0', 'net.smc.hs_ctrl': '' });
    expect(parseSysctlD(formatExport('sysctl.d', []))).toEqual({});
  });

  it('Kubernetes: the fragment in a pod passes the Pod API schema (kubernetes-models), which a number value fails', () => {
    const fragment = parseYaml(formatExport('k8s', ENTRIES)) as { securityContext: unknown };
    const podWith = (securityContext: unknown): Pod =>
      new Pod({ metadata: { name: 'smc-app' }, spec: { securityContext, containers: [{ name: 'app', image: 'node:20' }] } } as ConstructorParameters<typeof Pod>[0]);
    expect(() => podWith(fragment.securityContext).validate()).not.toThrow();
    // the schema is really checked: the same fragment with an unquoted number is refused
    expect(() => podWith({ sysctls: [{ name: 'net.smc.wmem', value: 1048576 }] }).validate()).toThrow(/sysctls\/0\/value must be string/);
  });

  it('podman: one --sysctl=KEY=VALUE option per line, nothing else (the shell splits it into arguments)', () => {
    const text = formatExport('podman', ENTRIES);
    expect(text.split(/\s+/).filter(Boolean)).toEqual(['--sysctl=net.smc.wmem=1048576', '--sysctl=net.smc.autocorking_size=0', '--sysctl=net.smc.hs_ctrl=']);
    expect(formatExport('podman', [])).toBe('');
  });
});
