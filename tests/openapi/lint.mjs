// Lints the API description with Redocly's recommended rules (redocly.yaml beside this file):
// errors fail, warnings are printed. Telemetry is off (run.sh); nothing is fetched.
// Usage: node lint.mjs docs/openapi.yaml
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const doc = process.argv[2];
const r = spawnSync(join(here, 'node_modules/.bin/redocly'),
  ['lint', doc, '--config', join(here, 'redocly.yaml'), '--format', 'stylish'],
  { stdio: 'inherit', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
process.exit(r.status ?? 1);
