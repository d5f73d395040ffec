// The tool subcommands, each registered from its own module.
import type { Argv } from 'yargs';


/** Registers one top-level subcommand; setExit records the exit code its handler decided. */
export type RegisterCommand = (y: Argv, setExit: (code: number) => void) => void;

import { registerUeid } from './ueid';
import { registerStats } from './stats';

export const SUBCOMMANDS: Record<string, RegisterCommand> = {
  ueid: registerUeid,
  stats: registerStats,
};
