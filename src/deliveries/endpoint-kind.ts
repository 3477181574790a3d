// Which deliveries are whose to take (DESIGN §12): the dispatcher sends the deliveries of
// webhook endpoints; consumers poll and stream those of pull endpoints (lease.ts). Both take
// only queue heads that are claimable now (claim.ts CLAIMABLE_NOW), so the head-of-line rule and
// the lifecycle are the same for both kinds.

/**
 * The endpoints row `alias` is a webhook endpoint without a rateLimit: its deliveries are the
 * dispatcher's to claim freely. A rate-limited one's are claimed only through its token bucket
 * (claimLimitedHeads below; src/dispatch/rate-limit.ts), so no other lease path takes them.
 */
export function webhookEndpoint(alias: string): string {
  return `${alias}.kind = 'webhook' AND ${alias}.rate_limit IS NULL`;
}
