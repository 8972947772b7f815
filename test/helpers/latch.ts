/** A moment a test waits for and another part of it marks: `await l.reached` resolves once `l.open()` was called. */
export interface Latch {
  reached: Promise<void>;
  open(): void;
}

export function latch(): Latch {
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (open = resolve));
  return { reached, open };
}
