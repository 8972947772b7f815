// The signed GitHub push notification bench/latency.bench.mjs sends (not a benchmark itself). Each is its own
// delivery, as GitHub sends one per push: the pushed commit in `after` and a delivery id of its own. The daemon
// answers a signed body it has acted on already with 200 and no fetch (a replay), so a bench sending the same body
// every round timed one fetch and then stopped at "hook 200".
import { createHmac, randomUUID } from 'node:crypto';

/** The body and headers of a push of `after` to `ref`, signed with `secret`. */
export function signedPush(secret, { ref = 'refs/heads/main', after, delivery = randomUUID() }) {
  const body = JSON.stringify({ ref, after });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return {
    body,
    headers: { 'x-hub-signature-256': signature, 'x-github-event': 'push', 'x-github-delivery': delivery, 'content-type': 'application/json' },
  };
}
