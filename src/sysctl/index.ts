// net.smc.* sysctls of a host or a container: list, read and write them in the network namespace of
// a process (target) or at a netns path/name (netns), or in our own. Every name is checked against
// the names that namespace's kernel has, and every value against the schema, before anything is
// written; several values are all checked before the first is written, and if the kernel refuses a later
// one the earlier ones are written back, so a set is all or nothing (or says exactly what stayed).
//
// These are per network namespace, not per process: a write changes every SMC socket created later
// in that namespace. For one program's buffers use smc-run -t/-r (SO_SNDBUF/SO_RCVBUF per socket).
import { NoSmcError } from '../api/errors';
import { TargetError, withNetns, type NamespaceTarget } from '../netns';
import { SysctlError } from './errors';
import { openSmcSysctls, type SmcSysctlFiles } from './procfs';
import { isDefaultValue, keyOf, normalizeName, parseKernelValue, parseSysctlValue, rangeText, specOf, SYSCTL_SCHEMA, type SysctlSpec } from './schema';

export { SysctlError, type SysctlErrorCode } from './errors';
export { SYSCTL_SCHEMA, specOf, type SysctlSpec, type SysctlType, type SysctlUnit } from './schema';

export type SysctlValue = number | string;

/** One net.smc sysctl with its value in a namespace, and what smc-run knows about it. */
export interface SmcSysctl {
  /** bare name: autocorking_size */
  name: string;
  /** full key: net.smc.autocorking_size */
  key: string;
  /** integers as numbers, strings (and sysctls unknown to smc-run) as text */
  value: SysctlValue;
  /** undefined for a sysctl this version of smc-run does not know (a newer kernel's) */
  default: SysctlValue | undefined;
  isDefault: boolean | undefined;
  unit: SysctlSpec['unit'] | undefined;
  range: string | undefined;
  since: string | undefined;
  meaning: string | undefined;
  matters: string | undefined;
}

export interface SysctlChange {
  name: string;
  key: string;
  old: SysctlValue;
  /** read back after the write: what the kernel holds now */
  new: SysctlValue;
}

/** A validated assignment: the exact text the kernel will be given. */
export interface SysctlSetting {
  name: string;
  key: string;
  text: string;
}

/** The namespace's sysctl files for the duration of fn. */
function inNamespace<T>(target: NamespaceTarget, fn: (files: SmcSysctlFiles) => T): T {
  return withNetns(target, (ns) => fn(openSmcSysctls(ns)));
}

/**
 * The bare name if this kernel has it; otherwise ENOSYSCTL (not a sysctl smc-run knows: a usage error) or
 * ENOTSUP (one smc-run knows that this kernel lacks), listing the ones it has.
 */
export function checkName(input: string, names: readonly string[]): string {
  const valid = `valid: ${names.join(', ') || '(none)'}`;
  let name: string;
  try {
    name = normalizeName(input);
  } catch (e) {
    if (e instanceof SysctlError) throw new SysctlError('ENOSYSCTL', `${e.message}; ${valid}`);
    throw e;
  }
  if (names.includes(name)) return name;
  const spec = specOf(name);
  if (spec) {
    const needs = spec.requires ? `, with ${spec.requires}` : '';
    throw new SysctlError('ENOTSUP', `${keyOf(name)} is not in this kernel (added in Linux ${spec.since}${needs}); ${valid}`);
  }
  throw new SysctlError('ENOSYSCTL', `unknown sysctl ${keyOf(name)}; ${valid}`);
}

function describe(name: string, raw: string): SmcSysctl {
  const spec = specOf(name);
  const value = parseKernelValue(spec, raw);
  return {
    name,
    key: keyOf(name),
    value,
    default: spec?.default,
    isDefault: isDefaultValue(spec, value),
    unit: spec?.unit,
    range: spec ? rangeText(spec) : undefined,
    since: spec?.since,
    meaning: spec?.meaning,
    matters: spec?.matters,
  };
}

/** Validates assignments against the names present (discovered) and the schema; writes nothing. */
export function validateSettings(assignments: readonly (readonly [string, SysctlValue])[], names: readonly string[]): SysctlSetting[] {
  return assignments.map(([input, value]) => {
    const name = checkName(input, names);
    return { name, key: keyOf(name), text: parseSysctlValue(name, specOf(name), value) };
  });
}

/** Every sysctl of the namespace, in name order. */
export function listFrom(files: SmcSysctlFiles): SmcSysctl[] {
  return files.names.map((name) => describe(name, files.read(name)));
}

export function readFrom(files: SmcSysctlFiles, inputs: readonly string[]): SmcSysctl[] {
  const names = inputs.map((i) => checkName(i, files.names));
  return names.map((name) => describe(name, files.read(name)));
}

/** Checks all, reads every old value, then writes each in order and reads it back: all or nothing. */
export function writeTo(files: SmcSysctlFiles, assignments: readonly (readonly [string, SysctlValue])[]): SysctlChange[] {
  const settings = validateSettings(assignments, files.names);
  const oldTexts = settings.map(({ name }) => files.read(name));
  const changes: SysctlChange[] = [];
  for (const [i, { name, key, text }] of settings.entries()) {
    const spec = specOf(name);
    let written = false;
    try {
      files.write(name, text);
      written = true;
      changes.push({ name, key, old: parseKernelValue(spec, oldTexts[i] as string), new: parseKernelValue(spec, files.read(name)) });
    } catch (e) {
      // a write that went through but could not be read back is undone too
      const toRestore = settings.slice(0, written ? i + 1 : i).map((s, j) => ({ ...s, oldText: oldTexts[j] as string }));
      throw withOutcome(e, restoreInReverse(files, toRestore));
    }
  }
  return changes;
}

interface Restored {
  key: string;
  oldText: string;
  /** why the old value could not be written back, and what the kernel holds instead */
  failed?: { why: string; now: string };
}

/** Writes the old values back, last first, into the namespace held open (even if --target has exited). */
function restoreInReverse(files: SmcSysctlFiles, written: readonly (SysctlSetting & { oldText: string })[]): Restored[] {
  return [...written].reverse().map(({ name, key, oldText }) => {
    try {
      files.restore(name, oldText);
      const now = files.read(name);
      return now === oldText ? { key, oldText } : { key, oldText, failed: { why: 'the kernel kept another value', now } };
    } catch (e) {
      let now = 'unknown';
      try {
        now = files.read(name);
      } catch {
        // the namespace cannot be read either: "unknown" is what we know
      }
      const why = (e as { code?: unknown }).code ?? (e instanceof Error ? e.message : String(e));
      return { key, oldText, failed: { why: String(why), now } };
    }
  });
}

const shown = (text: string): string => (text === '' ? '""' : text);

/**
 * The error of the failed step, its message extended by what the namespace holds now: one true line. The
 * error keeps its class and code, so the exit status stays that of the failure.
 */
function withOutcome(e: unknown, restored: readonly Restored[]): unknown {
  if (!(e instanceof Error)) return e;
  const ok = restored.filter((r) => r.failed === undefined);
  const bad = restored.filter((r) => r.failed !== undefined);
  let outcome: string;
  if (bad.length > 0) {
    const notRestored = bad.map((r) => `${r.key} (it is ${shown(r.failed!.now)}, was ${shown(r.oldText)}: ${r.failed!.why})`).join(', ');
    const restoredToo = ok.length > 0 ? `; restored ${ok.map((r) => `${r.key} = ${shown(r.oldText)}`).join(', ')}` : '';
    outcome = `; could not restore ${notRestored}${restoredToo}`;
  } else if (ok.length > 0) {
    outcome = `; restored what was set before it (${ok.map((r) => `${r.key} = ${shown(r.oldText)}`).join(', ')}): the namespace is as it was`;
  } else {
    // nothing had been written: a --target that exited leaves its namespace as it was
    outcome = e instanceof TargetError && e.code === 'ESRCH' ? ' (its network namespace was left unchanged)' : '';
  }
  e.message += outcome;
  return e;
}

/** All net.smc sysctls of the target namespace (own namespace when target is empty). */
export function listSmcSysctls(target: NamespaceTarget = {}): SmcSysctl[] {
  return inNamespace(target, listFrom);
}

/** One sysctl ("autocorking_size" or "net.smc.autocorking_size") of the target namespace. */
export function readSmcSysctl(name: string, target: NamespaceTarget = {}): SmcSysctl {
  return inNamespace(target, (files) => readFrom(files, [name])[0] as SmcSysctl);
}

export function readSmcSysctls(names: readonly string[], target: NamespaceTarget = {}): SmcSysctl[] {
  return inNamespace(target, (files) => readFrom(files, names));
}

/**
 * Sets one sysctl in the target namespace. value: a number, or text as for sysctl(8); byte sizes
 * also as "64k" / "1M". Throws SysctlError (ENOSYSCTL, ENOTSUP, EINVAL, ERANGE, EACCES/EPERM), NoSmcError or
 * TargetError; on a validation error nothing is written.
 */
export function writeSmcSysctl(name: string, value: SysctlValue, target: NamespaceTarget = {}): SysctlChange {
  return writeSmcSysctls([[name, value]], target)[0] as SysctlChange;
}

/**
 * Sets several sysctls; all are validated before the first write, and when a later write fails the earlier
 * ones are written back to their old values (last first) before the error is thrown: its message says what
 * failed and whether everything was restored, or which values could not be.
 */
export function writeSmcSysctls(assignments: readonly (readonly [string, SysctlValue])[], target: NamespaceTarget = {}): SysctlChange[] {
  return inNamespace(target, (files) => writeTo(files, assignments));
}

/**
 * Validates assignments for a file meant for another system (an OCI spec, a pod, sysctl.d): names
 * the schema knows are accepted without SMC here; others must exist in the target namespace.
 */
export function validateForExport(assignments: readonly (readonly [string, SysctlValue])[], target: NamespaceTarget = {}): SysctlSetting[] {
  const known = SYSCTL_SCHEMA.map((s) => s.name).sort();
  const needsKernel = assignments.some(([input]) => {
    try {
      return !known.includes(normalizeName(input));
    } catch {
      return false; // malformed: checkName below reports it
    }
  });
  const names = needsKernel ? [...new Set([...known, ...presentNames(target)])].sort() : known;
  return validateSettings(assignments, names);
}

/** The names in the target namespace, none when this kernel has no SMC (exporting still works). */
function presentNames(target: NamespaceTarget): readonly string[] {
  try {
    return inNamespace(target, (f) => f.names);
  } catch (e) {
    if (e instanceof NoSmcError) return [];
    throw e;
  }
}

/** "NAME=VALUE" as typed on a command line. */
export function parseAssignment(text: string): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new SysctlError('EINVAL', `"${text}" is not NAME=VALUE (example: autocorking_size=0)`);
  return [text.slice(0, eq).trim(), text.slice(eq + 1).trim()];
}
