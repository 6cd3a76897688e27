// The addon in worker_threads: each worker loads its own instance (napi-rs addons are
// context-aware), and a mender in each repairs calls at the same time as the main thread.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { Mender } from 'toolmend';

const READ = { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' }, limit: { type: 'integer' } }, required: ['path'] } };

const WORKER = `
  const { parentPort, workerData } = require('node:worker_threads');
  const { Mender } = require(workerData.entry);
  const mender = new Mender([workerData.tool]);
  let repaired = 0;
  for (let i = 0; i < workerData.calls; i++) {
    const call = mender.repairCall('read', '{"file_path": "f' + i + '", "limit": "' + i + '"}');
    if (call.status === 'repaired' && call.argumentsText === '{"path":"f' + i + '","limit":' + i + '}') repaired++;
  }
  parentPort.postMessage(repaired);
`;

it('repairs calls in 2 workers and the main thread at once', async () => {
  const calls = 2000;
  const runs = [0, 1].map(
    () => new Promise((resolve, reject) => {
      const worker = new Worker(WORKER, { eval: true, workerData: { tool: READ, calls, entry: fileURLToPath(new URL('../dist/index.js', import.meta.url)) } });
      worker.once('message', resolve);
      worker.once('error', reject);
    }),
  );
  const mender = new Mender([READ]);
  let repaired = 0;
  for (let i = 0; i < calls; i++) {
    if (mender.repairCall('read', `{"file_path": "m${i}"}`).status === 'repaired') repaired++;
  }
  assert.deepEqual(await Promise.all(runs), [calls, calls]);
  assert.equal(repaired, calls);
});
