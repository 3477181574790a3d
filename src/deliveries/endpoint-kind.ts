// Which deliveries are whose to take (DESIGN §12): the dispatcher sends the deliveries of
// webhook endpoints; consumers poll and stream those of pull endpoints (lease.ts). Both take
// only queue heads that are claimable now (claim.ts CLAIMABLE_NOW), so the head-of-line rule and
// the lifecycle are the same for both kinds.

/** The endpoints row `alias` is a webhook endpoint: its deliveries are the dispatcher's to send. */
export function webhookEndpoint(alias: string): string {
  return `${alias}.kind = 'webhook'`;
}
