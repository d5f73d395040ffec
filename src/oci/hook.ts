// The OCI runtime hook (`smc-run oci-hook`, installed through hooks.d for podman and CRI-O): the runtime
// runs it with the container's state on stdin at createRuntime (status "creating": the namespaces exist,
// the container's program has not started, so its first socket is already switched) and at poststop
// (status "stopped"). A container whose annotations ask for SMC (src/oci/annotations.ts) gets its network
// namespace switched, or, when it runs in the host's namespace (host network), its cgroup; its sysctls set;
// poststop undoes the switch once no other container of the same scope is left. A failure leaves the
// container on TCP with one line for the runtime's log, unless io.smc-run/required says it must not start.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodePolicy } from '../bpf/policy';
import { disableCgroupId, disableCookie, enableCgroup, enableNamespace } from '../bpf/switch';
import { CGROUP_ROOT } from '../bpf/cgroup';
import { netnsCookie, pinned, withNetns } from '../netns';
import { writeSmcSysctls } from '../sysctl';
import { ANNOTATION, isRequired, parseRequest } from './annotations';
import { holdForTests } from '../test-hooks';
import { withRecordsLock } from './lock';
import { allRecords, readRecord, removeRecord, sameScope, writeRecord, type HookRecord } from './records';

/** The OCI state a runtime hands its hooks (runtime-spec config.md, "state"). */
export interface OciState {
  ociVersion?: string;
  id: string;
  status: string;
  pid?: number;
  bundle?: string;
  annotations?: Record<string, string>;
}

export interface HookOutcome {
  /** the hook's exit status: non-zero only where io.smc-run/required asks the container to fail */
  exit: number;
  /** one line for the runtime's log (stderr), when there is something to say */
  message?: string;
}

const OK: HookOutcome = { exit: 0 };

/** The state on stdin; throws with one line when it is not an OCI state. */
export function parseState(text: string): OciState {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error('stdin is not the OCI state (JSON) a runtime gives its hooks: run by podman or CRI-O through hooks.d, see `smc-run oci-hook install`');
  }
  const s = v as Partial<OciState>;
  if (typeof s !== 'object' || s === null || typeof s.id !== 'string' || typeof s.status !== 'string') throw new Error('the OCI state on stdin has no id or status');
  return s as OciState;
}

// the Kubernetes names CRI-O passes, by the record's field
const POD_ANNOTATIONS = { name: 'io.kubernetes.pod.name', namespace: 'io.kubernetes.pod.namespace', uid: 'io.kubernetes.pod.uid', container: 'io.kubernetes.container.name' } as const;

const podOf = (a: Readonly<Record<string, string>>): HookRecord['pod'] => {
  const pod = Object.fromEntries(Object.entries(POD_ANNOTATIONS).flatMap(([field, key]) => (a[key] === undefined ? [] : [[field, a[key]]])));
  return Object.keys(pod).length > 0 ? pod : undefined;
};

/** The cgroup v2 directory of a process (the "0::" line of /proc/PID/cgroup). */
export function cgroupOfPid(pid: number, root = CGROUP_ROOT): string {
  const line = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::'));
  if (line === undefined) throw new Error(`process ${pid} has no cgroup v2 (only v1 hierarchies): the host-network container can't be switched by its cgroup`);
  return path.join(root, line.slice(3));
}

/** createRuntime: switch what the annotations ask for. */
export function onCreate(state: OciState, dir?: string): HookOutcome {
  const ann = state.annotations ?? {};
  const required = isRequired(ann);
  const fail = (why: string): HookOutcome => ({
    exit: required ? 1 : 0,
    message: `${why}; ${required ? `the container does not start (${ANNOTATION.required})` : 'the container runs on TCP'}`,
  });
  let req;
  try {
    req = parseRequest(ann);
  } catch (e) {
    return fail((e as Error).message);
  }
  if (!req.enable) return OK;
  const pid = state.pid;
  if (pid === undefined || pid <= 0) return fail('the OCI state has no container process: install the hook for the createRuntime stage (smc-run oci-hook install)');
  let policy: Buffer | undefined;
  try {
    policy = req.include.length + req.exclude.length > 0 ? encodePolicy(req.include, req.exclude) : undefined;
  } catch (e) {
    return fail(`${ANNOTATION.include}/${ANNOTATION.exclude}: ${(e as Error).message}`);
  }
  const pod = podOf(ann);
  const at = new Date().toISOString();
  // Under the records' lock (one hook at a time: the containers of a pod start and stop side by side), the
  // record is written before the switch and names its scope by the key the switch keeps (the namespace's
  // cookie, the cgroup's id): a hook killed after the switch still leaves poststop what it must undo.
  let recorded = false;
  try {
    return withRecordsLock(() => {
      const hostNetwork = fs.statSync(`/proc/${pid}/ns/net`).ino === fs.statSync('/proc/self/ns/net').ino;
      if (hostNetwork) {
        if (req.sysctls.length > 0) return fail(`${ANNOTATION.sysctls}: the container runs in the host's network namespace, whose net.smc sysctls are the host's: not set from a container`);
        const cg = cgroupOfPid(pid);
        const id = String(fs.statSync(cg, { bigint: true }).ino);
        writeRecord({ id: state.id, scope: { kind: 'cgroup', id, path: cg }, pod, at }, dir);
        recorded = true;
        enableCgroup(cg, policy);
        holdForTests('oci');
        return OK;
      }
      return withNetns({ target: pid }, (ns) => {
        if (ns === undefined) throw new Error('no namespace opened');
        writeRecord({ id: state.id, scope: { kind: 'netns', cookie: netnsCookie(ns), inode: ns.inode }, pod, at }, dir);
        recorded = true;
        const changes = req.sysctls.length > 0 ? writeSmcSysctls(req.sysctls, pinned(ns)) : [];
        try {
          enableNamespace(ns, policy);
        } catch (e) {
          // unswitched, as it would be without the hook: its sysctls back as they were
          if (changes.length > 0) writeSmcSysctls(changes.map((c) => [c.name, c.old] as const).reverse(), pinned(ns));
          throw e;
        }
        holdForTests('oci');
        return OK;
      });
    }, dir);
  } catch (e) {
    if (recorded) removeRecord(state.id, dir);
    return fail((e as Error).message);
  }
}

/** poststop: undo the container's switch once no other container's record names the same scope. */
export function onStop(state: OciState, dir?: string): HookOutcome {
  try {
    return withRecordsLock(() => {
      const rec = readRecord(state.id, dir);
      if (rec === undefined) return OK;
      removeRecord(state.id, dir);
      if (allRecords(dir).some((r) => sameScope(r.scope, rec.scope))) return OK;
      if (rec.scope.kind === 'cgroup') disableCgroupId(rec.scope.id);
      else if (rec.scope.cookie !== '') disableCookie(rec.scope.cookie); // '' only in a record of an older hook
      return OK;
    }, dir);
  } catch (e) {
    return { exit: 0, message: `undoing its switch: ${(e as Error).message} (smc-run status shows what is left; smc-run disable clears it)` };
  }
}

/** The hook: the state's status says the stage (the runtime passes no other argument). */
export function runHook(state: OciState, dir?: string): HookOutcome {
  if (state.status === 'creating' || state.status === 'created') return onCreate(state, dir);
  if (state.status === 'stopped') return onStop(state, dir);
  return OK;
}
