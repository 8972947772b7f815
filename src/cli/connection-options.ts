/**
 * The connection flags every command talking to the service declares. Light on purpose (commander
 * only): registering commands must not load the HTTP client. Resolution lives in connection.ts.
 */
import { Option, type Command } from './commander.js';

export interface ConnectionFlags {
  url?: string;
  tokenFile?: string;
  requestTimeout?: string;
  retries?: string | number;
  dataSourcesPath?: string;
  dataSourceDeletePath?: string;
}

export const DEFAULT_REQUEST_TIMEOUT = '30s';
export const DEFAULT_RETRIES = 4;

export function addConnectionOptions<C extends Command>(cmd: C): C {
  cmd
    .addOption(new Option('--url <url>', 'base URL of the service (env GOVOPS_URL)'))
    .addOption(new Option('--token-file <path>', 'file holding the API token (default: env GOVOPS_TOKEN)'))
    .addOption(new Option('--request-timeout <duration>', 'timeout of one HTTP request, e.g. 30s').default(DEFAULT_REQUEST_TIMEOUT))
    .addOption(new Option('--retries <n>', 'retries of a failed request by the client, the only layer that repeats it (network errors, timeouts, 408, 429, 5xx)').default(String(DEFAULT_RETRIES)))
    .addOption(new Option('--data-sources-path <path>', 'where the service creates and lists object-store data sources (env GOVOPS_DATA_SOURCES_PATH; default /native-s3/handler)'))
    .addOption(new Option('--data-source-delete-path <path>', 'where the service deletes a data source: DELETE <path>/<id> (env GOVOPS_DATA_SOURCE_DELETE_PATH; default /dataSource)'));
  return cmd;
}
