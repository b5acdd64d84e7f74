import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartQueue } from '../src/restart';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>(r => (open = r));
  return { opened, open };
}

test('restarts requested during a restart are folded into one more', async () => {
  const gates = [gate(), gate()];
  let runs = 0;
  let concurrent = 0;
  const q = new RestartQueue(async () => {
    const g = gates[runs++];
    concurrent++;
    assert.equal(concurrent, 1);
    await g.opened;
    concurrent--;
  });
  const first = q.request();
  const second = q.request();
  const third = q.request();
  assert.equal(second, third);
  gates[0].open();
  await first;
  gates[1].open();
  await Promise.all([second, third]);
  assert.equal(runs, 2);
});

test('a failing restart does not stop later ones', async () => {
  let runs = 0;
  const q = new RestartQueue(async () => { runs++; throw new Error('server missing'); });
  await q.request();
  await q.request();
  assert.equal(runs, 2);
});
