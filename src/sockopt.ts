// TCP_NODELAY / TCP_CORK on a socket's fd. On SMC sockets the kernel applies them to the internal TCP
// socket and SMC acts on them: TCP_CORK=1 holds small writes back, TCP_CORK=0 or TCP_NODELAY=1 sends
// what is held at once. These are kernel socket options; Node's socket.cork() only buffers in
// JavaScript and never reaches the kernel.
import type * as net from 'node:net';
import { IPPROTO_TCP, TCP_CORK, TCP_NODELAY } from './constants';
import { addon } from './native';

type Handle = { fd?: number; constructor: { name: string } };

function handleOf(socket: net.Socket, what: string): Handle | undefined {
  const s = socket as unknown as { _handle?: Handle | null; destroyed: boolean; connecting: boolean };
  if (s.destroyed) throw new TypeError(`${what}: the socket is destroyed`);
  const h = s._handle ?? undefined;
  if (h && h.constructor.name === 'Pipe') throw new TypeError(`${what}: not a TCP socket (a unix socket or pipe)`);
  return h;
}

function fdOf(socket: net.Socket, what: string): number | undefined {
  const h = handleOf(socket, what);
  const fd = h?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

function setOpt(socket: net.Socket, name: number, on: boolean, what: string): void {
  const fd = fdOf(socket, what);
  if (fd !== undefined) {
    addon().setSockOptInt(fd, IPPROTO_TCP, name, on ? 1 : 0);
    return;
  }
  // no fd yet (DNS lookup or connect not started): apply as soon as the socket has one. From inside an
  // event listener a throw would be an uncaught exception: a failure destroys the socket with the error
  // instead (the program's 'error' handler sees it), and a socket that errors or closes before it
  // connects drops the pending option.
  const apply = (): void => {
    socket.off('close', drop);
    try {
      const later = fdOf(socket, what);
      if (later !== undefined) addon().setSockOptInt(later, IPPROTO_TCP, name, on ? 1 : 0);
    } catch (e) {
      socket.destroy(e instanceof Error ? e : new Error(String(e)));
    }
  };
  const drop = (): void => {
    socket.off('connect', apply);
  };
  socket.once('connect', apply);
  socket.once('close', drop);
}

function getOpt(socket: net.Socket, name: number, what: string): boolean {
  const fd = fdOf(socket, what);
  if (fd === undefined) throw new TypeError(`${what}: the socket has no file descriptor yet (not connected)`);
  return addon().getSockOptInt(fd, IPPROTO_TCP, name) !== 0;
}

/**
 * Sets TCP_CORK on the socket's fd (a socket still resolving its address gets it once connected).
 * While corked, the kernel (and SMC) holds partial segments back; clearing it sends them at once.
 */
export const setTcpCork = (socket: net.Socket, on: boolean): void => setOpt(socket, TCP_CORK, on, 'setTcpCork');
export const getTcpCork = (socket: net.Socket): boolean => getOpt(socket, TCP_CORK, 'getTcpCork');
/**
 * socket.setNoDelay(), then the option set on the fd directly so that errors surface (EBADF...).
 * Node caches the last value it set, so going through it first keeps that cache truthful.
 */
export function setTcpNoDelay(socket: net.Socket, on: boolean): void {
  socket.setNoDelay(on);
  setOpt(socket, TCP_NODELAY, on, 'setTcpNoDelay');
}
export const getTcpNoDelay = (socket: net.Socket): boolean => getOpt(socket, TCP_NODELAY, 'getTcpNoDelay');

/**
 * Corks the socket, runs fn (its writes), and uncorks only after Node has handed every one of those
 * writes to the kernel — not while some still sit in Node's own write queue — so the batch leaves as
 * one transfer. Useful for many small writes per message on SMC-R with autocorking off; the kernel's
 * autocorking (net.smc.autocorking_size) already batches while earlier RDMA writes are in flight.
 */
export async function withTcpCork<T>(socket: net.Socket, fn: () => T | Promise<T>): Promise<T> {
  setTcpCork(socket, true);
  let result: T;
  try {
    result = await fn();
  } catch (e) {
    uncork(socket);
    throw e;
  }
  if (socket.writableLength > 0) {
    // writes complete in order: an empty write's callback runs once all earlier ones reached the kernel
    await new Promise<void>((resolve) => socket.write(Buffer.alloc(0), () => resolve()));
  }
  uncork(socket);
  return result;
}

function uncork(socket: net.Socket): void {
  if (!socket.destroyed) setTcpCork(socket, false);
}
