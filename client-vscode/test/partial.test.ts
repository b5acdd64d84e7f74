import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findDismissed, findPartialAccept } from '../src/partial';

test('accept word: the accepted length counts UTF-16 units from the item start', () => {
  const text = 'x = émoji😀 \n';
  const items = [{ insertText: 'émoji😀 = 1', start: 4 }];
  assert.deepEqual(findPartialAccept(items, text, 4 + 'émoji😀 '.length), { index: 0, acceptedLength: 8 });
});

test('a whole accept, nothing accepted, or text that is not the item is no partial accept', () => {
  const items = [{ insertText: 'abc', start: 2 }];
  assert.equal(findPartialAccept(items, 'x abc', 5), undefined);
  assert.equal(findPartialAccept(items, 'x ', 2), undefined);
  assert.equal(findPartialAccept(items, 'x zz', 4), undefined);
});

test('the item whose text was taken is picked', () => {
  const items = [{ insertText: 'foo(1)', start: 0 }, { insertText: 'bar(2)', start: 0 }];
  assert.deepEqual(findPartialAccept(items, 'bar(', 4), { index: 1, acceptedLength: 4 });
});

test('escape dismisses the first item shown, only where and when it was asked for', () => {
  const shown = { uri: 'file:///a.py', version: 3, at: 9, items: [{ insertText: 'x + 1', start: 9 }] };
  assert.equal(findDismissed(shown, 'file:///a.py', 3, 9), 0);
  assert.equal(findDismissed(shown, 'file:///a.py', 4, 9), undefined);  // typed since: not ours to name
  assert.equal(findDismissed(shown, 'file:///a.py', 3, 10), undefined);
  assert.equal(findDismissed(shown, 'file:///b.py', 3, 9), undefined);
  assert.equal(findDismissed({ ...shown, items: [] }, 'file:///a.py', 3, 9), undefined);
  assert.equal(findDismissed(undefined, 'file:///a.py', 3, 9), undefined);
});
