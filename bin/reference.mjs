// Starts bin/reference.ts from its cached bundle (bin/launch.mjs says why).
import { launch } from './launch.mjs';

await launch('bin/reference.ts');
