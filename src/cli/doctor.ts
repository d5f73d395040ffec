// smc-run doctor [--cmd PATH] [--peer HOST:PORT] [--serve PORT] [--target PID | --netns PATH|NAME] [--json]
import type { Argv } from 'yargs';
import { type Check, runChecks } from '../doctor/checks';
import { programCheck } from '../doctor/program';
import { loopbackSelfTest, peerSelfTest, serveSelfTest } from '../doctor/selftest';
import type { RegisterCommand } from './commands';
import { CliError, EXIT_USAGE } from './errors';
import { printJson, targetOf, withJson, withTarget } from './options';

const MARK: Record<Check['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', info: 'info' };

function print(checks: Check[]): void {
  for (const c of checks) {
    process.stdout.write(`[${MARK[c.status]}] ${c.message}\n`);
    if (c.fix) process.stdout.write(`       fix: ${c.fix}\n`);
  }
}

export const registerDoctor: RegisterCommand = (y: Argv, setExit) => {
  y.command('doctor', 'why are my connections not SMC, and what to do about it', (c) =>
    withTarget(withJson(c))
      .option('peer', { type: 'string', describe: 'also test a connection to HOST:PORT (where "smc-run doctor --serve PORT" runs)' })
      .option('serve', { type: 'number', describe: 'answer --peer self-tests from other hosts on PORT (until Ctrl-C)' })
      .option('count', { type: 'number', hidden: true, describe: 'with --serve: stop after N answers' })
      .option('cmd', { type: 'string', describe: 'also say which mechanism would make PATH\'s connections SMC (Node shim, LD_PRELOAD, none)' })
      .option('selftest', { type: 'boolean', default: true, describe: 'run the loopback self-test (--no-selftest skips it)' })
      .example('smc-run doctor', 'check this host')
      .example('smc-run doctor --serve 7777', 'on host B, then on host A: smc-run doctor --peer B:7777'),
  async (a) => {
    const args = a as unknown as { json: boolean; cmd?: string; peer?: string; serve?: number; count?: number; selftest: boolean; target?: number; netns?: string };
    if (args.serve !== undefined) {
      if (!Number.isInteger(args.serve) || args.serve < 0 || args.serve > 65535) throw new CliError('EUSAGE', '--serve needs a port 0..65535', EXIT_USAGE);
      await serveSelfTest(args.serve, args.count, (port) => process.stderr.write(`smc-run doctor: serving self-tests on port ${port}\n`));
      return;
    }
    const result = runChecks(targetOf(args)); // errors: main()'s toCliError
    const checks = result.checks;
    const ownNamespace = args.target === undefined && args.netns === undefined;
    if (result.facts.afSmc && args.selftest) {
      if (ownNamespace) checks.push(await loopbackSelfTest());
      else checks.push({ id: 'selftest.loopback', status: 'info', message: 'loopback self-test runs in the caller\'s namespace only: run smc-run doctor inside the container for it' });
    }
    if (args.peer) checks.push(await peerSelfTest(args.peer));
    if (args.cmd !== undefined) checks.push(programCheck(args.cmd));
    const healthy = !checks.some((c) => c.status === 'fail');
    if (args.json) printJson({ ok: healthy, checks });
    else {
      print(checks);
      process.stdout.write(healthy ? 'smc-run doctor: SMC is ready\n' : 'smc-run doctor: connections will not use SMC until the FAIL lines are fixed\n');
    }
    setExit(healthy ? 0 : 1);
  });
};
