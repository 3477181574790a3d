// Which deliveries are whose to take (DESIGN §12): the dispatcher sends the deliveries of
// webhook endpoints; consumers poll and stream those of pull endpoints (lease.ts). Both take
// only queue heads that are claimable now (claim.ts CLAIMABLE_NOW), so the head-of-line rule and
// the lifecycle are the same for both kinds.

/** The row alias `d` is a delivery to a webhook endpoint: one the dispatcher may send. */
export const TO_WEBHOOK_ENDPOINT = `EXISTS (SELECT 1 FROM endpoints k WHERE k.id = d.endpoint_id AND k.kind = 'webhook')`;
