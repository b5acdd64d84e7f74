import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findPartialAccept } from '../src/partial';

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
