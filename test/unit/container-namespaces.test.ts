// stats serve --containers: which namespaces the exporter reads from the OCI hook's records, found again
// at each scrape, and the smc_container_info series that names their containers. The records here point
// at this process's own namespace (the one namespace a test can be sure exists); reading SMC from it is
// the guest tests' part (test/kernel/newest/oci-hook.test.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerNamespaces } from '../../src/metrics/container-namespaces';
import { removeRecord, writeRecord } from '../../src/oci/records';

describe('stats serve --containers: the namespaces of the OCI hook records', () => {
  let dir = '';
  const own = fs.statSync('/proc/self/ns/net').ino;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-ctr-ns-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('one reader per namespace (a pod\'s containers share it), labelled by the pod; one info sample per container; closed once no record names it', () => {
    const scope = { kind: 'netns' as const, cookie: '77', inode: own };
    writeRecord({ id: 'b'.repeat(64), scope, pod: { name: 'web', namespace: 'shop', container: 'app' }, at: 'now' }, dir);
    writeRecord({ id: 'a'.repeat(64), scope, pod: { name: 'web', namespace: 'shop', container: 'sidecar' }, at: 'now' }, dir);
    writeRecord({ id: 'c'.repeat(64), scope: { kind: 'cgroup', id: '5', path: '/sys/fs/cgroup/x' }, at: 'now' }, dir);
    writeRecord({ id: 'd'.repeat(64), scope: { kind: 'netns', cookie: '78', inode: 1 }, at: 'now' }, dir); // no process there
    const c = new ContainerNamespaces(new Set(), dir);
    const readers = c.refresh();
    expect(readers.map((r) => [r.label, r.inode])).toEqual([['pod:shop/web', own]]);
    expect(c.refresh()[0]).toBe(readers[0]); // kept between scrapes
    expect(c.info()).toMatchObject({ name: 'smc_container_info', type: 'gauge', labelNames: ['netns', 'container_id', 'pod', 'pod_namespace', 'container'] });
    expect(c.info().samples).toEqual([
      { labels: { netns: 'pod:shop/web', container_id: 'a'.repeat(64), pod: 'web', pod_namespace: 'shop', container: 'sidecar' }, value: 1 },
      { labels: { netns: 'pod:shop/web', container_id: 'b'.repeat(64), pod: 'web', pod_namespace: 'shop', container: 'app' }, value: 1 },
    ]);
    removeRecord('a'.repeat(64), dir);
    expect(c.refresh()).toHaveLength(1);
    expect(c.info().samples).toHaveLength(1);
    removeRecord('b'.repeat(64), dir);
    expect(c.refresh()).toEqual([]);
    expect(c.info().samples).toEqual([]);
    c.close();
  });

  it('a namespace the exporter reads already (--target/--netns) is left out; a container without pod names is labelled by its id', () => {
    writeRecord({ id: 'e'.repeat(64), scope: { kind: 'netns', cookie: '79', inode: own }, at: 'now' }, dir);
    expect(new ContainerNamespaces(new Set([own]), dir).refresh()).toEqual([]);
    const c = new ContainerNamespaces(new Set(), dir);
    expect(c.refresh().map((r) => r.label)).toEqual([`container:${'e'.repeat(12)}`]);
    c.close();
  });
});
