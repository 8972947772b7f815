// Types of growth-target.mjs for the TypeScript test that checks it.
export const GROWTH_TARGET: string;
