/** `1 file`, `2 files`, `0 files`: a count with its noun agreeing (`many` for a plural that is not the noun and `s`). Pure. */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The verb agreeing with a count: `agree(1, 'has', 'have')` is `has`. Pure. */
export function agree(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}
