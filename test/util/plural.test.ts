import { describe, expect, it } from 'vitest';
import { agree, counted } from '../../src/util/plural.js';

describe('counted and agree', () => {
  it('a count agrees with its noun and verb: no "(s)" in what a user reads', () => {
    expect(counted(1, 'manifest file')).toBe('1 manifest file');
    expect(counted(0, 'manifest file')).toBe('0 manifest files');
    expect(counted(2, 'data source')).toBe('2 data sources');
    expect(counted(3, 'entry', 'entries')).toBe('3 entries');
    expect(`${counted(1, 'file')} ${agree(1, 'has', 'have')}`).toBe('1 file has');
    expect(`${counted(2, 'file')} ${agree(2, 'has', 'have')}`).toBe('2 files have');
  });
});
