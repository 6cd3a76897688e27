// The README's runnable example (examples/quickstart.mjs) runs and prints what its comments say.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';

it('examples/quickstart.mjs prints what its comments say', () => {
  const file = fileURLToPath(new URL('../examples/quickstart.mjs', import.meta.url));
  const out = execFileSync(process.execPath, [file], { encoding: 'utf8' });
  assert.match(out, /^repaired \{"path":"src\/main.rs","limit":20\} \[ 'field_renamed', 'scalar_coerced', 'null_stripped' \]$/m);
  assert.match(out, /^invalid re-prompt$/m);
  assert.match(out, /\[ \[ 'repaired', '\{"path":"x"\}' \] \] 1/);
  assert.match(out, /^\{"name":"Ada","tags":\["x","y"\]\}$/m);
});
