// The Kubernetes node kit (deploy/): the DaemonSet and its Namespace pass the Kubernetes API schemas
// (kubernetes-models), which a wrong field fails; it mounts what its commands need where they look for it;
// the kubelet fragment allows net.smc.*; promtool accepts the scrape job; the package ships deploy/.
// Its commands run as plain processes in the newest SMC-D guest (test/kernel/newest/oci-hook.test.ts).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { promtool } from '../helpers/ops';

const ROOT = path.join(__dirname, '..', '..');
const KIT = path.join(ROOT, 'deploy', 'kubernetes');
const docs = (file: string): Record<string, unknown>[] => parseAllDocuments(fs.readFileSync(path.join(KIT, file), 'utf8')).map((d) => d.toJS() as Record<string, unknown>);

type Ds = ConstructorParameters<typeof DaemonSet>[0] & { spec: { template: { spec: { hostPID: boolean; initContainers: { command: string[]; env: { name: string; value: string }[]; volumeMounts: { name: string; mountPath: string }[]; securityContext: { privileged: boolean } }[]; containers: { command: string[]; volumeMounts: { name: string; mountPath: string }[] }[]; volumes: { name: string; hostPath: { path: string } }[] } } } };

describe('the Kubernetes node kit (deploy/)', () => {
  const [ns, ds] = docs('smc-run-node.yaml') as [Record<string, unknown>, Ds];

  it('the Namespace and the DaemonSet pass the API schemas; a wrong field type is refused', () => {
    expect(() => new Namespace(ns as ConstructorParameters<typeof Namespace>[0]).validate()).not.toThrow();
    expect(() => new DaemonSet(ds).validate()).not.toThrow();
    const broken = structuredClone(ds) as unknown as { spec: { template: { spec: { hostPID: unknown } } } };
    broken.spec.template.spec.hostPID = 'yes';
    expect(() => new DaemonSet(broken as unknown as Ds).validate()).toThrow(/hostPID/);
  });

  it('the init container runs the package\'s node-install.sh with the host mounted where the script writes', () => {
    const spec = ds.spec.template.spec;
    const init = spec.initContainers[0]!;
    expect(init.command).toEqual(['sh', '/usr/local/lib/node_modules/smc-run/deploy/node-install.sh']);
    expect(fs.statSync(path.join(ROOT, 'deploy', 'node-install.sh')).mode & 0o111).not.toBe(0);
    expect(init.securityContext.privileged).toBe(true);
    const hostRoot = init.env.find((e) => e.name === 'HOST_ROOT')!.value;
    const script = fs.readFileSync(path.join(ROOT, 'deploy', 'node-install.sh'), 'utf8');
    const defaults = Object.fromEntries([...script.matchAll(/^(PREFIX|HOOKS_DIR)=\$\{\1:-([^}]+)\}$/gm)].map((m) => [m[1], m[2]]));
    expect(defaults).toEqual({ PREFIX: '/opt/smc-run', HOOKS_DIR: '/etc/containers/oci/hooks.d' });
    // each place the script writes is a mounted host path, at the same place under HOST_ROOT
    const hostPathOf = (name: string): string => spec.volumes.find((v) => v.name === name)!.hostPath.path;
    for (const target of [defaults.PREFIX!, defaults.HOOKS_DIR!]) {
      const m = init.volumeMounts.find((v) => `${hostRoot}${target}`.startsWith(v.mountPath));
      expect(m, target).toBeDefined();
      expect(`${hostRoot}${target}`.slice(hostRoot.length)).toMatch(new RegExp(`^${hostPathOf(m!.name)}`));
    }
  });

  it('the exporter reads the containers the hook recorded (root\'s cache directory on the host) and the node\'s namespace', () => {
    const spec = ds.spec.template.spec;
    expect(spec.hostPID).toBe(true);
    const c = spec.containers[0]!;
    expect(c.command.slice(0, 4)).toEqual(['smc-run', 'stats', 'serve', '--containers']);
    expect(c.command).toContain('--target');
    const records = c.volumeMounts.find((v) => v.name === 'records')!;
    expect(records.mountPath).toBe('/root/.cache/smc-run');
    expect(spec.volumes.find((v) => v.name === 'records')!.hostPath.path).toBe('/root/.cache/smc-run');
  });

  it('the kubelet fragment allows the net.smc sysctls; promtool accepts the scrape job', () => {
    expect(parseYaml(fs.readFileSync(path.join(KIT, 'kubelet-sysctls.yaml'), 'utf8'))).toEqual({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', allowedUnsafeSysctls: ['net.smc.*'] });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-kit-'));
    try {
      // Debian builds Prometheus without Kubernetes discovery: promtool checks the job with its discovery
      // block replaced by a static target (the relabelling, the rest of the job); the block itself is
      // checked for the fields Prometheus' kubernetes_sd_config has
      const job = parseYaml(fs.readFileSync(path.join(KIT, 'prometheus-scrape.yml'), 'utf8')) as { scrape_configs: Record<string, unknown>[] };
      const sd = job.scrape_configs[0]!.kubernetes_sd_configs as { role: string; namespaces: { names: string[] } }[];
      expect(sd).toEqual([{ role: 'pod', namespaces: { names: [String(ns.metadata && (ns.metadata as { name: string }).name)] } }]);
      const config = path.join(dir, 'prometheus.yml');
      const check = (j: unknown): string => {
        fs.writeFileSync(config, JSON.stringify(j));
        return execFileSync(promtool(), ['check', 'config', '--syntax-only', config], { encoding: 'utf8', stdio: 'pipe' });
      };
      const { kubernetes_sd_configs: _, ...rest } = job.scrape_configs[0]!;
      expect(check({ scrape_configs: [{ ...rest, static_configs: [{ targets: ['10.0.0.1:9787'] }] }] })).toMatch(/SUCCESS/);
      expect(() => check({ scrape_configs: [{ ...rest, relabel_configs: [{ action: 'nope' }] }] })).toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the package ships deploy/', () => {
    expect((JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files).toContain('deploy/');
  });
});
