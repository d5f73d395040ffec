#!/usr/bin/env node
'use strict';
// Writes ops/grafana/smc-run.json, the Grafana dashboard the package ships, from its source
// ops/grafana/dashboard.ts (esbuild strips the types in memory; nothing is written but the JSON).
// `node scripts/build-dashboard.js OUT` writes OUT instead (the unit test compares it with the file).
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
const source = path.join(root, 'ops', 'grafana', 'dashboard.ts');
const out = path.resolve(process.argv[2] ?? path.join(root, 'ops', 'grafana', 'smc-run.json'));
const built = esbuild.buildSync({
  entryPoints: [source], bundle: true, platform: 'node', format: 'cjs', target: 'node20', write: false,
  packages: 'external', logLevel: 'warning',
});
const mod = new Module(source);
mod.filename = source;
mod.paths = Module._nodeModulePaths(path.dirname(source));
mod._compile(built.outputFiles[0].text, source);
fs.writeFileSync(out, mod.exports.dashboardJson());
console.error(`wrote ${path.relative(process.cwd(), out)}`);
