import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StderrTail, exitMessage } from '../src/exits';

test('the tail keeps the last lines, across chunks cut anywhere', () => {
  const tail = new StderrTail(3);
  for (const chunk of ['Trace', 'back (most recent call last):\n  File "x.py", line 1\n', '\n  raise Boom\r\nBoom: the ', 'key was refused'])
    tail.push(chunk);
  assert.deepEqual(tail.last, ['  File "x.py", line 1', '  raise Boom', 'Boom: the key was refused']);
});

test('the message has the exit code or the signal and what the server last said', () => {
  assert.equal(exitMessage(1, null, ['Traceback ...', 'ValueError: bad']),
               'the server stopped (exit code 1): Traceback ... · ValueError: bad');
  assert.equal(exitMessage(null, 'SIGKILL', []), 'the server stopped (killed by SIGKILL); it wrote nothing on stderr');
});

test('the server\'s own INFO and DEBUG log lines are not what it last said', () => {
  const tail = new StderrTail();
  tail.push('2026-12-02 00:40:23,499 INFO flowedit.model: model link: socket 1 open\n');
  tail.push('2026-12-02 00:40:24,001 WARNING pygls: Cancel notification for unknown message id "9"\n');
  tail.push('2026-12-02 00:40:25,002 DEBUG flowedit.lsp: x\n' + 'y'.repeat(300));
  assert.deepEqual(tail.last, ['2026-12-02 00:40:24,001 WARNING pygls: Cancel notification for unknown message id "9"',
                               'y'.repeat(199) + '…']);
});
