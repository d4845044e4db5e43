// lib/spec/cumulative-deltas.ts: the one EV-12 rule (suite, load harness, k6).
import { describe, expect, it } from 'vitest';
import { DeltaSnapshotWatch, describeSnapshots, snapshotDeltas } from '../../lib/spec/cumulative-deltas.ts';

describe('EV-12: deltas that are snapshots of the reply so far', () => {
  it('finds deltas that each repeat the previous one and grow', () => {
    const f = snapshotDeltas(['Hel', 'Hello', 'Hello wor', 'Hello world']);
    expect(f).toMatchObject({ choice: 0, deltas: 4, style: 'prefix of the previous delta', first: ['Hel', 'Hello', 'Hello wor'] });
    expect(describeSnapshots(f!)).toContain('"Hel", "Hello", "Hello wor"');
  });
  it('finds deltas that each start with all earlier deltas combined', () => {
    expect(snapshotDeltas(['a', 'ab', 'aabc'])).toMatchObject({ style: 'prefix of all earlier deltas combined', deltas: 3 });
  });
  it('needs three non-empty deltas: two snapshots are no evidence', () => {
    expect(snapshotDeltas(['Hel', 'Hello'])).toBeUndefined();
    expect(snapshotDeltas(['Hel', '', 'Hello', ''])).toBeUndefined();
  });
  it('passes legal streams: repeated words, repetitive one-character deltas, one chunk, empty deltas, ordinary text', () => {
    for (const legal of [
      ['ha', 'ha', 'ha', 'ha'],
      ['a', 'a', 'a', 'a', 'a'],
      ['ha', 'ha', 'haha'],
      ['Hello world, this is the whole reply.'],
      ['', 'Hello', '', ' world', ''],
      ['Hello', ' world', ', how', ' are', ' you?'],
      ['The', 'The', 'The end'],
    ]) expect(snapshotDeltas(legal), JSON.stringify(legal)).toBeUndefined();
  });
  it('one break in the pattern is not a snapshot stream', () => {
    expect(snapshotDeltas(['Hel', 'Hello', 'xyz', 'xyz and more'])).toBeUndefined();
  });
  it('reads chunks as clients do: role-only first chunk, usage-only last chunk, per choice, non-strings ignored', () => {
    const w = new DeltaSnapshotWatch();
    w.pushChunk({ choices: [{ index: 0, delta: { role: 'assistant' } }] });
    for (const t of ['Hi', 'Hi th', 'Hi there']) w.pushChunk({ choices: [{ index: 0, delta: { content: t } }, { index: 1, delta: { content: t.length.toString() } }] });
    w.pushChunk({ choices: [], usage: { prompt_tokens: 1 } });
    w.pushChunk({ choices: [{ index: 0, delta: { content: null }, finish_reason: 'stop' }] });
    w.pushChunk(null);
    expect(w.finding()).toMatchObject({ choice: 0, deltas: 3 });
    const legal = new DeltaSnapshotWatch();
    for (const t of ['Hi', ' there', '!']) legal.pushChunk({ choices: [{ delta: { content: t } }] });
    expect(legal.finding()).toBeUndefined();
  });
  it('a snapshot stream stays one when chunks repeat the one before (a real gateway\'s closing chunks)', () => {
    // Snapshots, then two closing chunks that each repeat the whole reply.
    const gateway = ['Timber', 'Timber meadow', 'Timber meadow foxtrot', 'Timber meadow foxtrot orbit.', 'Timber meadow foxtrot orbit.', 'Timber meadow foxtrot orbit.'];
    expect(snapshotDeltas(gateway)).toMatchObject({ deltas: 6, style: 'prefix of the previous delta', first: ['Timber', 'Timber meadow', 'Timber meadow foxtrot'] });
    // A duplicated finish chunk in the middle of the growth, and a closing chunk with the reply so far (combined reading).
    expect(snapshotDeltas(['Hel', 'Hel', 'Hello', 'Hello wor'])).toMatchObject({ deltas: 4 });
    expect(snapshotDeltas(['a', 'ab', 'aabc', 'aabaabc'])).toMatchObject({ style: 'prefix of all earlier deltas combined' });
  });
  it('repeats alone, or one growth among repeats, are no snapshot stream', () => {
    for (const legal of [
      ['ha', 'ha', 'ha', 'ha', 'ha', 'ha'],
      ['Timber', 'Timber', 'Timber meadow'],
      ['Timber meadow', 'Timber meadow', 'Timber meadow'],
      ['ha', 'ha', 'ha', ' ', 'a', 'a', 'a', ' ', 'Hello', ' world'],
    ]) expect(snapshotDeltas(legal), JSON.stringify(legal)).toBeUndefined();
  });
  it('quotes long deltas cut short', () => {
    const long = 'x'.repeat(100);
    const f = snapshotDeltas([long, `${long}y`, `${long}yz`]);
    expect(f!.first[0]).toBe(`${'x'.repeat(60)}…`);
  });
  it('finds one delta that restates the reply so far (a finishing chunk repeating the whole text)', () => {
    const deltas = ['The quick', ' brown fox', ' jumps over', ' the lazy dog.'];
    const f = snapshotDeltas([...deltas, deltas.join('')]);
    expect(f).toMatchObject({ deltas: 5, style: 'restatement of all earlier deltas combined', restated: { delta: 5, earlier: 4, chars: 44 } });
    expect(describeSnapshots(f!)).toMatch(/^choice 0: delta 5 of 5 restates the reply so far \(the 4 deltas before it, 44 characters\) instead of new text: "The quick brown fox jumps over the lazy dog\."/);
    // Anywhere in the stream, and with more text after the restatement.
    expect(snapshotDeltas([...deltas, `${deltas.join('')} Again.`, ' More.'])).toMatchObject({ restated: { delta: 5 } });
    expect(snapshotDeltas(['Alpha bravo', ' charlie', ' delta', 'Alpha bravo charlie delta', ' echo'])).toMatchObject({ restated: { delta: 4, earlier: 3 } });
  });
  it('a restatement needs three earlier deltas and 16 characters: short repeats stay legal', () => {
    for (const legal of [
      [' ha', ' ha'],
      [' ha', ' ha', ' ha', ' ha ha ha', ' ha'],
      ['Hello world, t', 'Hello world, t'],
      ['Hello world', ' and more', 'Hello world and more'],
      ['ab', 'cd', 'ef', 'abcdef'],
      ['The quick', ' brown fox', ' jumps over', ' the lazy dog', ' the lazy dog'],
      ['The quick', ' brown fox', ' jumps over', 'The quick brown fox jumps ove'],
    ]) expect(snapshotDeltas(legal), JSON.stringify(legal)).toBeUndefined();
  });
  it('keeps a few numbers, not the reply, to judge restatements', () => {
    const w = new DeltaSnapshotWatch();
    const piece = 'lorem ipsum dolor sit amet ';
    for (let i = 0; i < 2000; i++) w.push(0, piece);
    expect(w.finding()).toBeUndefined();
    const kept = JSON.stringify([...(w as unknown as { choices: Map<number, object> }).choices.values()]).length;
    expect(kept).toBeLessThan(1000);
    w.push(0, piece.repeat(2000));
    expect(w.finding()).toMatchObject({ restated: { delta: 2001, chars: piece.length * 2000 } });
  });
});
