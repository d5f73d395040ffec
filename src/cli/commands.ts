// The tool subcommands, each registered from its own module.
import type { Argv } from 'yargs';
import { registerDoctor } from './doctor';
import { registerHsLimit } from './hs-limit';
import { registerOciHook } from './oci-hook';
import { registerStats } from './stats';
import { registerSysctl } from './sysctl';
import { registerSwitch } from './switch';
import { registerSeid } from './seid';
import { registerUeid } from './ueid';

/** Registers one top-level subcommand; setExit records the exit code its handler decided. */
export type RegisterCommand = (y: Argv, setExit: (code: number) => void) => void;

export const SUBCOMMANDS: Record<string, RegisterCommand> = {
  stats: registerStats,
  sysctl: registerSysctl,
  ueid: registerUeid,
  seid: registerSeid,
  'hs-limit': registerHsLimit,
  doctor: registerDoctor,
  enable: registerSwitch,
  disable: registerSwitch,
  status: registerSwitch,
  'oci-hook': registerOciHook,
};
