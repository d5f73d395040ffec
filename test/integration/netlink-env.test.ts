// The addon reads its one environment switch (SMC_RUN_TEST_NETLINK_NICE) once, when it loads on the JS
// thread, never on the pool thread of a request: getenv there races process.env writes (setenv) on the
// JS thread. Seen from outside: a later write to process.env changes nothing. A request the kernel never
// answers (no NLM_F_REQUEST flag: the kernel skips it) keeps its exchange thread alive long enough to look
// at it: by default the exchange runs on a thread of its own at nice 19.
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NETLINK_GENERIC } from '../../src/constants';
import { addon } from '../../src/native';
import { buildMessage } from '../../src/netlink/message';

function niceThreads(): number {
  let n = 0;
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // field 19 (nice), counted after the command's closing parenthesis
      if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16] === '19') n++;
    } catch {
      // the thread ended meanwhile
    }
  }
  return n;
}

describe('the addon\'s environment switch', () => {
  it('is read when the addon loads: setting it later does not move the exchange off its nice-19 thread', async () => {
    expect(process.env.SMC_RUN_TEST_NETLINK_NICE).toBeUndefined();
    const a = addon();
    const fd = a.netlinkOpen(NETLINK_GENERIC);
    try {
      process.env.SMC_RUN_TEST_NETLINK_NICE = '0';
      expect(niceThreads()).toBe(0);
      const pending = a.netlinkExchangeAsync(fd, buildMessage(0x10, 0, 7, Buffer.alloc(4)));
      const settled = pending.then(() => 'answered', (e: { code?: string }) => e.code);
      let seen = 0;
      for (let i = 0; i < 100 && seen === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
        seen = niceThreads();
      }
      expect(seen).toBe(1);
      // the socket's receive timeout (5 s) ends the exchange
      expect(await settled).toBe('ETIMEDOUT');
    } finally {
      delete process.env.SMC_RUN_TEST_NETLINK_NICE;
      a.closeFd(fd);
    }
  }, 15_000);
});
