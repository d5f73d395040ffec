// node:util with the polyfills of scripts/node-compat.cjs (see node-compat-hooks.mjs).
import util from 'node:util';

export * from 'node:util';
export default util;
export const styleText = util.styleText;
export const parseEnv = util.parseEnv;
