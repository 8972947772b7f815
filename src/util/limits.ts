/** Size limits shared by the layers that read what others wrote. */

/** The largest manifest file read (bytes): manifests are small text files. The loader refuses a larger one by name. */
export const MAX_FILE_BYTES = 1024 * 1024;
