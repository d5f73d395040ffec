// Processes in network namespaces for tests that act on them by --target PID: starting one in a namespace of
// its own, waiting for a process to reach a namespace or to open one.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until pid has joined the namespace mounted at nsPath. */
export async function waitInNamespace(pid: number, nsPath: string): Promise<void> {
  const want = `net:[${fs.statSync(nsPath).ino}]`;
  for (let i = 0; i < 200; i++) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/ns/net`) === want) return;
    } catch {
      // not started yet
    }
    await pause(50);
  }
  throw new Error(`PID ${pid} never entered ${nsPath}`);
}

/** Waits until process pid holds an fd that leads to link (e.g. net:[INO]: it opened that namespace). */
export async function waitForFdOn(pid: number, link: string): Promise<void> {
  for (let i = 0; i < 2400; i++) {
    try {
      if (fs.readdirSync(`/proc/${pid}/fd`).some((fd) => fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === link)) return;
    } catch {
      // an fd closed while we looked, or the process is not there yet
    }
    await pause(25);
  }
  throw new Error(`PID ${pid} never opened ${link}`);
}

/**
 * A process in a network namespace of its own (unshare --net sleep 60), once it is in there; pushed onto
 * `children` first, so the caller's afterEach ends it even when this throws.
 */
export async function processInOwnNetns(children: ChildProcess[]): Promise<ChildProcess & { pid: number }> {
  const child = spawn('unshare', ['--net', 'sleep', '60'], { stdio: 'ignore' });
  children.push(child);
  const ours = fs.statSync('/proc/self/ns/net').ino;
  for (let i = 0; i < 200; i++) {
    try {
      if (fs.statSync(`/proc/${child.pid}/ns/net`).ino !== ours) return child as ChildProcess & { pid: number };
    } catch {
      // not started yet
    }
    await pause(25);
  }
  throw new Error('unshare --net never left our namespace');
}
