// UEID (User Enterprise ID) rules as the kernel checks them (net/smc/smc_clc.c): 1..32 characters of
// A-Z, 0-9, '.' and '-', starting with a letter or digit; stored blank-padded to 32 characters.
import { SMC_MAX_EID_LEN } from './netlink/smc-genl';

export class UeidError extends RangeError {
  readonly code = 'EINVAL';
}

/** Validates a UEID and returns the kernel's form: upper case, padded with blanks to 32 characters. */
export function normalizeUeid(input: string): string {
  const id = input.trim().toUpperCase();
  if (id.length === 0) throw new UeidError('a UEID cannot be empty');
  if (id.length > SMC_MAX_EID_LEN) throw new UeidError(`UEID "${input}" is ${id.length} characters; at most ${SMC_MAX_EID_LEN}`);
  if (!/^[A-Z0-9][A-Z0-9.-]*$/.test(id)) {
    throw new UeidError(`UEID "${input}" may contain only letters, digits, "." and "-", and must start with a letter or digit`);
  }
  return id.padEnd(SMC_MAX_EID_LEN, ' ');
}
