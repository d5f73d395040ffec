// What a container asks of smc-run through its annotations (OCI config, as podman and CRI-O pass them to
// the hook in the state on stdin): the request is checked whole before anything is done, so a bad value
// means nothing is switched and the reason is one line.
//   io.smc-run/enable: "true"           switch the container's network namespace (its cgroup on the host's)
//   network.alibabacloud.com/erdma-smcr: "true"   the same request, as Alibaba's erdma-controller writes it
//   io.smc-run/include, io.smc-run/exclude: CIDR[:PORT] lists, as `smc-run enable --include/--exclude`
//   io.smc-run/sysctls: "autocorking_size=65536,wmem=1M": net.smc sysctls of the container's namespace
//   io.smc-run/required: "true"          a failure stops the container instead of leaving it on TCP
import { parseRules, type Rule } from '../policy/rules';
import { parseAssignment } from '../sysctl';

export const ANNOTATION = {
  enable: 'io.smc-run/enable',
  erdma: 'network.alibabacloud.com/erdma-smcr',
  include: 'io.smc-run/include',
  exclude: 'io.smc-run/exclude',
  sysctls: 'io.smc-run/sysctls',
  required: 'io.smc-run/required',
} as const;

/** The hooks.d condition: either enabling annotation set to "true" (one regex each side). */
export const WHEN_ANNOTATIONS = { '^(io\\.smc-run/enable|network\\.alibabacloud\\.com/erdma-smcr)$': '^true$' } as const;

export interface SmcRequest {
  /** the container asked for SMC (either annotation "true") */
  enable: boolean;
  /** a failure must stop the container */
  required: boolean;
  include: Rule[];
  exclude: Rule[];
  /** [name, value] as given; validated against the namespace's sysctls when applied */
  sysctls: [string, string][];
}

export class AnnotationError extends Error {
  constructor(
    readonly annotation: string,
    message: string,
  ) {
    super(`${annotation}: ${message}`);
  }
}

const isTrue = (v: string | undefined): boolean => v?.trim().toLowerCase() === 'true';

/** The request in annotations; throws AnnotationError on the first malformed value (required is read first). */
export function parseRequest(annotations: Readonly<Record<string, string>>): SmcRequest {
  const required = isTrue(annotations[ANNOTATION.required]);
  const enable = isTrue(annotations[ANNOTATION.enable]) || isTrue(annotations[ANNOTATION.erdma]);
  const rules = (name: string): Rule[] => {
    const text = annotations[name]?.trim() ?? '';
    if (annotations[name] !== undefined && text === '') throw new AnnotationError(name, 'empty: give at least one CIDR[:PORT], or leave the annotation out');
    try {
      return parseRules(text);
    } catch (e) {
      throw new AnnotationError(name, (e as Error).message);
    }
  };
  const include = rules(ANNOTATION.include);
  const exclude = rules(ANNOTATION.exclude);
  const sysctlText = annotations[ANNOTATION.sysctls]?.trim() ?? '';
  const sysctls: [string, string][] = [];
  for (const item of sysctlText.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    try {
      sysctls.push(parseAssignment(item));
    } catch (e) {
      throw new AnnotationError(ANNOTATION.sysctls, (e as Error).message);
    }
  }
  return { enable, required, include, exclude, sysctls };
}

/** Whether the annotations say a failure must stop the container (read even when the rest is malformed). */
export const isRequired = (annotations: Readonly<Record<string, string>>): boolean => isTrue(annotations[ANNOTATION.required]);
