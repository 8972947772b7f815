export declare const STAMP: string;
export declare const SOURCES: readonly string[];
export declare function newestMtime(paths: readonly string[]): number;
export declare function buildIsFresh(root?: string): boolean;
