/** Manifest text builders shared by the apply, reconcile and daemon tests. */

/** A lakehouse integration (autoBootstrap true) whose token comes from the environment variable `tokenEnv`. */
export function lakehouseManifest(o: { name: string; host: string; httpPath: string; tokenEnv: string }): string {
  return `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${o.name}
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://${o.host}
    httpPath: ${o.httpPath}
    token: { fromEnv: ${o.tokenEnv} }
`;
}
