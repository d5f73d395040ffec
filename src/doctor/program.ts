// smc-run doctor --cmd PATH: which mechanism the launcher would use for a program, decided as bin/smc-run
// decides it (its mechanism() function): the Node shim for node and node scripts, the LD_PRELOAD library
// for other dynamically linked programs, nothing for static, Go and setuid/setgid programs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Check } from './checks';

export type Mechanism = 'node' | 'preload' | 'static' | 'go' | 'setuid' | 'setgid';

const PT_INTERP = 3;
const PT_NOTE = 4;
const NT_GO_BUILD_ID = 4;

/** A command name looked up in PATH as the shell does; a name with a slash is taken as it is. */
export function resolveCommand(cmd: string, pathEnv = process.env.PATH ?? ''): string | undefined {
  if (cmd.includes('/')) return fs.existsSync(cmd) ? cmd : undefined;
  for (const dir of pathEnv.split(':')) {
    const file = path.join(dir || '.', cmd);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

function elfMechanism(b: Buffer): Mechanism | undefined {
  if (b.length < 64 || b.readUInt32BE(0) !== 0x7f454c46) return undefined;
  const is64 = b[4] === 2;
  const be = b[5] === 2;
  const u16 = (o: number): number => (be ? b.readUInt16BE(o) : b.readUInt16LE(o));
  const u32 = (o: number): number => (be ? b.readUInt32BE(o) : b.readUInt32LE(o));
  const word = (o64: number, o32: number): number => (is64 ? Number(be ? b.readBigUInt64BE(o64) : b.readBigUInt64LE(o64)) : u32(o32));
  const phoff = word(32, 28);
  const phent = u16(is64 ? 54 : 42);
  const phnum = u16(is64 ? 56 : 44);
  let interp = false;
  for (let i = 0; i < phnum && phoff + (i + 1) * phent <= b.length; i++) {
    const h = phoff + i * phent;
    const type = u32(h);
    if (type === PT_INTERP) interp = true;
    if (type !== PT_NOTE) continue;
    const off = word(h + 8, h + 4);
    const end = Math.min(b.length, off + word(h + 32, h + 16));
    for (let n = off; n + 16 <= end; ) {
      const namesz = u32(n);
      const descsz = u32(n + 4);
      if (namesz === 3 && u32(n + 8) === NT_GO_BUILD_ID && b.toString('latin1', n + 12, n + 15) === 'Go\0') return 'go';
      n += 12 + Math.ceil(namesz / 4) * 4 + Math.ceil(descsz / 4) * 4;
    }
  }
  return interp ? undefined : 'static';
}

/** The mechanism for one program file (as bin/smc-run's mechanism()). */
export function programMechanism(file: string, uid = process.getuid?.() ?? 0, gid = process.getgid?.() ?? 0): Mechanism {
  if (/^(node|nodejs|node\d.*)$/.test(path.basename(file))) return 'node';
  let head: Buffer;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      head = Buffer.alloc(16384);
      head = head.subarray(0, fs.readSync(fd, head, 0, head.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return 'preload'; // unreadable (execute-only): the launcher cannot look inside either
  }
  if (head.toString('latin1', 0, 2) === '#!') {
    const line = head.toString('latin1', 2, head.indexOf(10) < 0 ? head.length : head.indexOf(10));
    return /(^|[/ ])(node|nodejs)( |$)/.test(line.trim()) ? 'node' : 'preload';
  }
  const elf = elfMechanism(head);
  if (elf) return elf;
  const st = fs.statSync(file);
  if (st.mode & 0o4000 && st.uid !== uid) return 'setuid';
  if (st.mode & 0o2000 && st.gid !== gid) return 'setgid';
  return 'preload';
}

const TEXT: Record<Mechanism, { status: Check['status']; text: string }> = {
  node: { status: 'ok', text: 'a Node program: the Node shim (NODE_OPTIONS --require) makes its TCP sockets SMC' },
  preload: { status: 'ok', text: 'dynamically linked: the LD_PRELOAD library (smc-preload.so) makes its TCP sockets and its children\'s SMC' },
  static: { status: 'warn', text: 'statically linked: LD_PRELOAD cannot reach it, its connections stay TCP' },
  go: { status: 'warn', text: 'a Go program (its socket calls bypass libc): LD_PRELOAD cannot reach it, its connections stay TCP' },
  setuid: { status: 'warn', text: 'setuid: the loader ignores LD_PRELOAD for it, its connections stay TCP' },
  setgid: { status: 'warn', text: 'setgid: the loader ignores LD_PRELOAD for it, its connections stay TCP' },
};

export function programCheck(cmd: string): Check {
  const file = resolveCommand(cmd);
  if (!file) return { id: 'program.mechanism', status: 'fail', message: `${cmd}: command not found` };
  const { status, text } = TEXT[programMechanism(file)];
  return { id: 'program.mechanism', status, message: `${file}: ${text}` };
}
