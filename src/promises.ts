// smc-run/promises (the package's "./promises" export): the promise front-end lives in api/promises.ts.
export * from './api/promises';
