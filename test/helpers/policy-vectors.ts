// test/fixtures/policy/vectors.json: the one table of rules x destinations -> decision that every
// implementation of the rule grammar runs (the Node parser, the LD_PRELOAD library, the BPF encoder).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from './run';

export interface Decision { include: string; exclude: string; address: string; port: number; listener: boolean; smc: boolean }
export interface Vectors { decisions: Decision[]; invalid: string[] }

export const VECTORS = JSON.parse(fs.readFileSync(path.join(REPO, 'test', 'fixtures', 'policy', 'vectors.json'), 'utf8')) as Vectors;

export const label = (d: Decision): string => `include "${d.include}" exclude "${d.exclude}" ${d.listener ? 'listen' : 'connect'} ${d.address}:${d.port}`;
