/** Size limits shared by the layers that read what others wrote. */

/** The largest manifest file read (bytes): manifests are small text files. The loader refuses a larger one by name. */
export const MAX_FILE_BYTES = 1024 * 1024;

/**
 * The most manifest files and links the directory source copies into one snapshot (it holds them in memory to digest
 * them). Ten times the largest service measured (issue #26: 10,000 webhooks and 10,000 data sources, one file each
 * with `govops export`'s default layout); the loader itself has no such limit.
 */
export const MAX_SNAPSHOT_ENTRIES = 100_000;
