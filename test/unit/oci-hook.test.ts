// The OCI hook's host side: what annotations ask for, the hooks.d file, the state on stdin, the records
// poststop reads back, and the outcomes that need no kernel (nothing asked, a bad request, no process).
// The switch itself is proved with podman in the newest SMC-D guest (test/kernel/newest/oci-hook.test.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION, AnnotationError, WHEN_ANNOTATIONS, parseRequest } from '../../src/oci/annotations';
import { onCreate, onStop, parseState } from '../../src/oci/hook';
import { hookDefinition, installHook, uninstallHook } from '../../src/oci/install';
import { allRecords, readRecord, removeRecord, sameScope, writeRecord } from '../../src/oci/records';

describe('OCI hook: annotations', () => {
  it('io.smc-run/enable or erdma-controller\'s annotation asks for SMC; anything but "true" does not', () => {
    expect(parseRequest({ [ANNOTATION.enable]: 'true' }).enable).toBe(true);
    expect(parseRequest({ [ANNOTATION.erdma]: 'true' }).enable).toBe(true);
    expect(parseRequest({ [ANNOTATION.enable]: 'TRUE ' }).enable).toBe(true);
    expect(parseRequest({ [ANNOTATION.enable]: 'yes' }).enable).toBe(false);
    expect(parseRequest({}).enable).toBe(false);
  });

  it('rules and sysctls as the CLI takes them; required read on its own', () => {
    const r = parseRequest({ [ANNOTATION.enable]: 'true', [ANNOTATION.exclude]: '10.0.0.0/8, *:6379', [ANNOTATION.include]: '[fd00::]/8:443', [ANNOTATION.sysctls]: 'autocorking_size=65536, wmem=1M', [ANNOTATION.required]: 'true' });
    expect(r.exclude.map((x) => x.text)).toEqual(['10.0.0.0/8', '*:6379']);
    expect(r.include.map((x) => x.text)).toEqual(['[fd00::]/8:443']);
    expect(r.sysctls).toEqual([['autocorking_size', '65536'], ['wmem', '1M']]);
    expect(r.required).toBe(true);
  });

  it('a malformed value names its annotation', () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{ [ANNOTATION.exclude]: '10.0.0.0/33' }, /^io\.smc-run\/exclude: /],
      [{ [ANNOTATION.include]: ' ' }, /^io\.smc-run\/include: empty/],
      [{ [ANNOTATION.include]: 'fe80::1%eth0' }, /^io\.smc-run\/include: /],
      [{ [ANNOTATION.sysctls]: 'autocorking_size' }, /^io\.smc-run\/sysctls: .*NAME=VALUE/],
    ];
    for (const [a, msg] of bad) {
      expect(() => parseRequest({ [ANNOTATION.enable]: 'true', ...a }), JSON.stringify(a)).toThrow(AnnotationError);
      expect(() => parseRequest({ [ANNOTATION.enable]: 'true', ...a }), JSON.stringify(a)).toThrow(msg);
    }
  });

  it('the hooks.d condition matches both enabling annotations set to "true", nothing else', () => {
    const [[key, value]] = Object.entries(WHEN_ANNOTATIONS) as [[string, string]];
    const k = new RegExp(key);
    const v = new RegExp(value);
    expect(k.test(ANNOTATION.enable) && k.test(ANNOTATION.erdma)).toBe(true);
    expect(k.test(ANNOTATION.exclude) || k.test('xio.smc-run/enable') || k.test('io.smc-run/enablex')).toBe(false);
    expect(v.test('true')).toBe(true);
    expect(v.test('false') || v.test('truex')).toBe(false);
  });
});

describe('OCI hook: the hooks.d file, the state, the records', () => {
  let dir = '';
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smc-run-oci-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('install writes the 1.0.0 hook for createRuntime and poststop, naming this package\'s launcher; uninstall removes it', () => {
    const file = installHook(path.join(dir, 'hooks.d'));
    const def = JSON.parse(fs.readFileSync(file, 'utf8')) as ReturnType<typeof hookDefinition> & { hook: { path: string; args: string[]; env: string[] }; stages: string[]; version: string };
    expect(def.version).toBe('1.0.0');
    expect(def.stages).toEqual(['createRuntime', 'poststop']);
    expect(def.hook.args).toEqual(['smc-run', 'oci-hook']);
    expect(fs.statSync(def.hook.path).mode & 0o111).not.toBe(0);
    expect(def.hook.env[0]).toMatch(new RegExp(`^PATH=${path.dirname(process.execPath)}:`));
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);
    expect(uninstallHook(path.join(dir, 'hooks.d'))).toBe(true);
    expect(uninstallHook(path.join(dir, 'hooks.d'))).toBe(false);
  });

  it('the state on stdin: JSON with an id and a status, else one line', () => {
    expect(parseState('{"ociVersion":"1.0.2","id":"abc","status":"creating","pid":42}')).toMatchObject({ id: 'abc', pid: 42 });
    expect(() => parseState('nope')).toThrow(/not the OCI state/);
    expect(() => parseState('{"status":"creating"}')).toThrow(/no id or status/);
  });

  it('records: one per container, read back, same scope by cookie or cgroup id; an id that would leave the directory is refused', () => {
    const rec = path.join(dir, 'records');
    writeRecord({ id: 'c1', scope: { kind: 'netns', cookie: '7', inode: 4026532000 }, at: 'now' }, rec);
    writeRecord({ id: 'c2', scope: { kind: 'netns', cookie: '7', inode: 4026532000 }, pod: { name: 'web', namespace: 'prod' }, at: 'now' }, rec);
    writeRecord({ id: 'c3', scope: { kind: 'cgroup', id: '7', path: '/sys/fs/cgroup/x' }, at: 'now' }, rec);
    expect(readRecord('c2', rec)?.pod).toEqual({ name: 'web', namespace: 'prod' });
    expect(allRecords(rec).map((r) => r.id).sort()).toEqual(['c1', 'c2', 'c3']);
    expect(sameScope(readRecord('c1', rec)!.scope, readRecord('c2', rec)!.scope)).toBe(true);
    expect(sameScope(readRecord('c1', rec)!.scope, readRecord('c3', rec)!.scope)).toBe(false);
    removeRecord('c1', rec);
    expect(readRecord('c1', rec)).toBeUndefined();
    expect(() => writeRecord({ id: '../x', scope: { kind: 'cgroup', id: '1', path: '/' }, at: 'now' }, rec)).toThrow(/not a runtime's id/);
  });

  it('outcomes without a kernel: nothing asked is silent; a bad request is one line, exit 1 only when required; no process is a failure', () => {
    const rec = path.join(dir, 'records2');
    const base = { id: 'ctr', status: 'creating', pid: process.pid };
    expect(onCreate({ ...base, annotations: {} }, rec)).toEqual({ exit: 0 });
    expect(onCreate({ ...base, annotations: { [ANNOTATION.enable]: 'true', [ANNOTATION.exclude]: '10.0.0.0/33' } }, rec)).toEqual({ exit: 0, message: expect.stringMatching(/^io\.smc-run\/exclude: .*; the container runs on TCP$/) });
    expect(onCreate({ ...base, annotations: { [ANNOTATION.enable]: 'true', [ANNOTATION.required]: 'true', [ANNOTATION.sysctls]: 'x' } }, rec)).toEqual({ exit: 1, message: expect.stringMatching(/the container does not start \(io\.smc-run\/required\)$/) });
    expect(onCreate({ id: 'ctr', status: 'creating', annotations: { [ANNOTATION.enable]: 'true' } }, rec)).toMatchObject({ exit: 0, message: expect.stringMatching(/no container process/) });
    const many = Array.from({ length: 17 }, (_, i) => `10.${i}.0.0/16`).join(',');
    expect(onCreate({ ...base, annotations: { [ANNOTATION.enable]: 'true', [ANNOTATION.exclude]: many } }, rec).message).toMatch(/at most 16 rules/);
    expect(onStop({ id: 'ctr', status: 'stopped' }, rec)).toEqual({ exit: 0 });
    expect(allRecords(rec)).toEqual([]);
  });

  it('poststop of one container of a pod leaves the shared namespace switched: only the last record out undoes it', () => {
    const rec = path.join(dir, 'records3');
    const scope = { kind: 'netns' as const, cookie: '4242', inode: 4026539999 };
    writeRecord({ id: 'infra', scope, at: 'now' }, rec);
    writeRecord({ id: 'app', scope, at: 'now' }, rec);
    // no loader here: a call to the switch shows as its one line (the switch is not built)
    const saved = process.env.SMC_RUN_BPF_LOADER;
    process.env.SMC_RUN_BPF_LOADER = path.join(dir, 'no-loader');
    try {
      // another container still names the namespace: the switch is not asked, only its own record goes
      expect(onStop({ id: 'app', status: 'stopped' }, rec)).toEqual({ exit: 0 });
      expect(allRecords(rec).map((r) => r.id)).toEqual(['infra']);
      // the last one out asks the switch to drop the namespace (here: it can't, one line, exit 0)
      expect(onStop({ id: 'infra', status: 'stopped' }, rec)).toEqual({ exit: 0, message: expect.stringMatching(/^undoing its switch: the BPF switch is not built/) });
      expect(allRecords(rec)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.SMC_RUN_BPF_LOADER;
      else process.env.SMC_RUN_BPF_LOADER = saved;
    }
  });
});
