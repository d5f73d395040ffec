// Module-resolution hooks for scripts/node-compat.cjs: an ESM `import { styleText } from 'node:util'`
// binds to the builtin's export names fixed at its first load, so for a Node without util.styleText the
// import is redirected to a module that re-exports node:util plus the polyfill installed on util itself.
const SHIM = new URL('./node-compat-util.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if ((specifier === 'node:util' || specifier === 'util') && context.parentURL !== SHIM) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
