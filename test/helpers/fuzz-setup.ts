// vitest setupFiles entry: fixed-seed fuzzing for every host test file (see fuzz.ts).
import { configureFuzzing } from './fuzz';

configureFuzzing();
