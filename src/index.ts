// smc-run's programmatic API. Import it from ESM or CommonJS: `import { getSmcInfo } from 'smc-run'`.
export { getSmcInfo, listSmcSockets } from './stats/sockets';
export { setTcpCork, getTcpCork, setTcpNoDelay, getTcpNoDelay, withTcpCork } from './sockopt';
export type { SmcSocketInfo, SmcMode, SmcFallbackInfo } from './stats/sockets';
export { fallbackReason, FALLBACK_REASONS } from './stats/fallback-reasons';
export type { FallbackReason } from './stats/fallback-reasons';
export { listUeids, addUeid, removeUeid, flushUeids, getSeid, setSeid } from './api/eid';
export type { SeidState } from './api/eid';
export { getSmcSystemStats, getSmcDevices, getSmcLinkGroups, getSmcSystemInfo } from './api/system';
export type { SmcDevices, SmcLinkGroups, SmcSystemInfo } from './api/system';
export type {
  SmcSystemStats, TechStats, FallbackStats, FallbackSide, FallbackCount, SizeHistogram, BufferCounters,
} from './stats/system';
export type { SmcDevice, SmcDevicePort } from './topology/devices';
export type { SmcdLinkGroup, SmcrLinkGroup, SmcrLink, SmcV2Info } from './topology/link-groups';
export type { DibsDevice } from './topology/dibs';
export { NoSmcError } from './api/errors';
export type { EnableResult } from './hook/enable';
export type { HookStats } from './hook/stats';
export type { NamespaceTarget } from './netns';
export { listSmcSysctls, readSmcSysctl, readSmcSysctls, writeSmcSysctl, writeSmcSysctls, SysctlError, SYSCTL_SCHEMA } from './sysctl';
export type { SmcSysctl, SysctlChange, SysctlValue, SysctlSpec, SysctlErrorCode, SysctlType, SysctlUnit } from './sysctl';
export { enableSmc, hookStats, isSmcSocket } from './api/hook';
export type { EnableOptions } from './api/hook';
