export interface paths {
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The dashboard
         * @description Public: no token.
         *
         *     Its data comes from this API with the token the user enters (kept in sessionStorage only).
         */
        get: operations["getDashboard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This document as a page
         * @description Public: no token.
         */
        get: operations["getDocs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The process is up
         * @description Public: no token.
         */
        get: operations["getHealthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Not offered: no server-initiated stream (stateless)
         * @description Public: no token.
         */
        get: operations["getMcp"];
        put?: never;
        /**
         * The MCP server for AI agents (Streamable HTTP, stateless)
         * @description Scope: `read` or `commit` or `propose` or `approve` or `consume` (`admin` holds every scope).
         *
         *     A JSON-RPC message of the Model Context Protocol, answered in JSON (send `Accept: application/json, text/event-stream`). Any token: the tools listed are those its scopes allow (docs/agents.md); each calls this API with the same token, and its refusals are the API's problems as tool results with `isError`.
         */
        post: operations["postMcp"];
        /**
         * Not offered: there is no session to end
         * @description Public: no token.
         */
        delete: operations["deleteMcp"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics
         * @description Scope: `read` (`admin` holds every scope); public when `OUTBOXD_METRICS_PUBLIC=1`.
         *
         *     Also served without a token on `OUTBOXD_METRICS_PORT` when set.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This document
         * @description Public: no token.
         *
         *     `webhooks` lists the registered event types (DESIGN §9) as they are now.
         */
        get: operations["getOpenapiJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Ready to serve
         * @description Public: no token.
         *
         *     Database reachable and its last write not refused for a full disk, migrations applied, dispatcher heartbeat fresh.
         */
        get: operations["getReadyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/snippet/verify.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The receiver snippet, JavaScript
         * @description Public: no token.
         *
         *     The same code as an ES module with JSDoc types, for Node.js 20 and later.
         */
        get: operations["getSnippetVerifyJs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/snippet/verify.ts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The receiver snippet, TypeScript
         * @description Public: no token.
         *
         *     For Bun, Deno, Cloudflare Workers and TypeScript builds.
         */
        get: operations["getSnippetVerifyTs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The attempt log across deliveries
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     outboxd extension (dashboard). Newest first. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next.
         */
        get: operations["getAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/commits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Commit record writes and events atomically
         * @description Scope: `commit` (`admin` holds every scope).
         *
         *     Writes every record and stores every event in one transaction; each event fans out to the endpoints whose patterns match its type (or to `endpoints`). `expectedVersion`: omitted = unconditional, `0` = must never have existed, `n` = must be at version n. An event's `aggregate` defaults to the only record's `<collection>/<id>`. `deliverBy` or `deliverWithin`, not both. A retry with the same `Idempotency-Key` and body gets the first response again (`Idempotent-Replayed: true`).
         */
        post: operations["postCommits"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List deliveries
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     Newest first. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next. `status=dead` is the dead-letter queue; `reason` filters it.
         */
        get: operations["getDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a delivery
         * @description Scope: `read` (`admin` holds every scope).
         */
        get: operations["getDeliveriesId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/{id}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The attempt log of a delivery
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     Oldest first.
         */
        get: operations["getDeliveriesIdAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a pending delivery
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     A `pending` delivery that is not leased becomes `dead` with `deadReason: "cancelled"` (visible and replayable); the next event of its aggregate is then free to go. 409 otherwise: `not-pending` for a delivered or dead one, `delivery-leased` with `Retry-After` (seconds until the lease ends) for one being sent now, whose attempt decides.
         */
        post: operations["postDeliveriesIdCancel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/{id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replay a dead delivery
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     Back to `pending` with its attempts reset and a new deadline (`deliverWithin`, default as at commit). The body is optional. 409 unless the delivery is dead (`not-dead`), its endpoint exists (`endpoint-deleted`) and its event's payload was not erased (`event-erased`); `delivery-not-expanded` with `Retry-After` while a deferred fan-out has yet to write its row.
         */
        post: operations["postDeliveriesIdReplay"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replay dead deliveries in bulk
         * @description Scope: `admin` (`admin` holds every scope).
         */
        post: operations["postDeliveriesReplay"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List endpoints
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     Newest first. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next.
         */
        get: operations["getEndpoints"];
        put?: never;
        /**
         * Create an endpoint
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     A webhook endpoint (`kind` `webhook`, the default) needs a `url`: `https` and not internal unless `OUTBOXD_ALLOW_PRIVATE_ENDPOINTS` is set. A pull endpoint (`kind` `pull`) takes neither `url` nor `secret`: consumers with the `consume` scope poll or stream its deliveries. Event-type patterns: an exact type, `prefix.*` or `*`; none = every event (`outboxd.*` events only reach patterns that start with `outboxd.`). Controls (DESIGN §19): `rateLimit`, `retrySchedule`, `disableAfter` (default "5d") and `filter`. The answer is the only place, with rotate and the secret route, where the signing secret appears.
         */
        post: operations["postEndpoints"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an endpoint
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     With its health: `lastSuccessAt`, `lastFailureAt`, `disabled` and why, `pending`, `dead`.
         */
        get: operations["getEndpointsId"];
        put?: never;
        post?: never;
        /**
         * Delete an endpoint
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     Its pending deliveries go dead with reason `endpoint_deleted`.
         */
        delete: operations["deleteEndpointsId"];
        options?: never;
        head?: never;
        /**
         * Change an endpoint
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     Omitted fields are left as they are; `null` on `rateLimit`, `retrySchedule` or `filter` removes that control. `disabled: true` disables the endpoint (reason `operator`), `false` enables it.
         */
        patch: operations["patchEndpointsId"];
        trace?: never;
    };
    "/v1/endpoints/{id}/ack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Acknowledge or refuse leased deliveries
         * @description Scope: `consume` (`admin` holds every scope).
         *
         *     An ack marks the delivery delivered; a nack is a failed attempt, tried again after `retryAfter` (up to 24h) or the backoff, and dead past its deadline. Each names the `leaseToken` it was leased with: a lost lease, an unknown id or another endpoint's delivery is listed in `stale` and changes nothing. An ack repeated under the token that acked it counts as acked. At most 500 of each.
         */
        post: operations["postEndpointsIdAck"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints/{id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Enable a disabled endpoint
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     After a 410 Gone or a PATCH disabled it; its pending deliveries resume.
         */
        post: operations["postEndpointsIdEnable"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints/{id}/poll": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Lease deliveries of a pull endpoint (long poll)
         * @description Scope: `consume` (`admin` holds every scope).
         *
         *     Leases up to `max` (1-500, default 100) deliveries, at most one per aggregate, in sequence order (the head-of-line rule of webhooks), each for `lease` (1s-15m, default 60s) under its own `leaseToken`. With `wait` (up to 60s, default 0) an empty answer is held until work arrives or the wait ends. Answer each with `/ack`; a lease that runs out is a failed attempt and the delivery comes again after the backoff. 409 for a webhook endpoint or a disabled one. The body is optional.
         */
        post: operations["postEndpointsIdPoll"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints/{id}/recover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Recover an endpoint after an outage
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     Replays this endpoint's `deadline_exceeded` deliveries whose event `occurredAt` is in [since, until] (until: now), in sequence order per aggregate, skipping erased events, in chunked transactions, and enables the endpoint in the last one. New deadline: `deliverWithin` (default as at commit).
         */
        post: operations["postEndpointsIdRecover"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate the signing secret
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     Every unexpired older secret keeps signing until its own expiry (`OUTBOXD_SECRET_GRACE`, 24h).
         */
        post: operations["postEndpointsIdRotateSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints/{id}/secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the signing secrets
         * @description Scope: `admin` (`admin` holds every scope).
         */
        get: operations["getEndpointsIdSecret"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints/{id}/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Stream deliveries of a pull endpoint (Server-Sent Events)
         * @description Scope: `consume` (`admin` holds every scope).
         *
         *     Each leased delivery is one message `event: delivery`, `id: <deliveryId>`, `data:` `{"deliveryId", "leaseToken", "attempt", "event"}`. At most `max` (1-500, default 100) are unacknowledged at once; answer them with `/ack`. Each lease (`lease`, 1s-15m, default 60s) is not renewed: an unacknowledged delivery is a failed attempt when it runs out and comes again. `Last-Event-ID` is ignored. A `: keepalive` comment every 15 s. Send the token in the `Authorization` header (browsers: a fetch-based SSE reader; `EventSource` cannot).
         */
        get: operations["getEndpointsIdStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/endpoints/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a signed outboxd.ping now
         * @description Scope: `admin` (`admin` holds every scope).
         */
        post: operations["postEndpointsIdTest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/event-types": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List event types
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     Ordered by type, outboxd's built-in `outboxd.*` types included. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next.
         */
        get: operations["getEventTypes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/event-types/{type}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an event type
         * @description Scope: `read` (`admin` holds every scope).
         */
        get: operations["getEventTypesType"];
        /**
         * Register or replace an event type
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     Replaces the whole entry (omitted fields reset). `schema` is a JSON Schema (draft 2020-12) for the event payload, at most 64 KiB, references only within itself; one that does not compile is 422. Commits and proposals with events of this type are validated against it. Types starting `outboxd.` are outboxd's own (409 `reserved-type`).
         */
        put: operations["putEventTypesType"];
        post?: never;
        /**
         * Remove an event type
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     Its events are no longer checked (and in strict mode no longer accepted).
         */
        delete: operations["deleteEventTypesType"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List events
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     Newest first. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next. With `aggregate`, ordered by sequence.
         */
        get: operations["getEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read an event and its deliveries
         * @description Scope: `read` (`admin` holds every scope).
         */
        get: operations["getEventsId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/ledger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The hash chain's length and head
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     `commits` counts the chain's entries (seq 0 to the head). Anchor `head.hash` somewhere else now and then and check it with `outboxd verify --anchor SEQ:HASH` (docs/ledger.md). `head` is null before the first commit.
         */
        get: operations["getLedger"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/ledger/commits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The hash chain, oldest first
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     Ascending by `seq`. `hash` = sha256(previousHash + JCS(content)) as DESIGN §13 defines; the first commit's previousHash is 64 zeros. `limit` is 1-500 (default 100); pass `next` as `after` for the next page.
         */
        get: operations["getLedgerCommits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/proposals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List proposals
         * @description Scope: `propose` or `approve` or `read` (`admin` holds every scope).
         *
         *     Items leave out `commit`. Newest first. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next.
         */
        get: operations["getProposals"];
        put?: never;
        /**
         * Propose a commit for a person's approval
         * @description Scope: `propose` (`admin` holds every scope).
         *
         *     The commit is validated now as a commit would be (event-type schemas included; pointers under `/commit`), and every record write must carry `expectedVersion`. Nothing is written until a token with `approve` (not this one) approves it. `Idempotency-Key` has its own namespace, apart from commits.
         */
        post: operations["postProposals"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/proposals/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a proposal, with each record's current state
         * @description Scope: `propose` or `approve` or `read` (`admin` holds every scope).
         *
         *     `current` holds each record of the commit as it is now: the diff's left side.
         */
        get: operations["getProposalsId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/proposals/{id}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve a proposal: apply its commit
         * @description Scope: `approve` (`admin` holds every scope).
         *
         *     Validates the commit again and applies it in one transaction, re-checking every `expectedVersion`; deadlines and fan-out count from now; the commit is the approver's. A changed record is 409 with `currentVersion`, another failed check its 4xx: the proposal then becomes `conflicted` with the problem in `result`, and nothing is written. The proposing token cannot approve (403, admin included). Approving again with the same token answers 200; any other decision on a decided or expired proposal is 409.
         */
        post: operations["postProposalsIdApprove"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/proposals/{id}/reject": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reject a proposal
         * @description Scope: `approve` (`admin` holds every scope).
         */
        post: operations["postProposalsIdReject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/records/{collection}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the records of a collection
         * @description Scope: `read` or `commit` or `propose` or `approve` (`admin` holds every scope).
         *
         *     Ordered by id. `limit` is 1-500 (default 100); pass `next` as `after` for the next page.
         */
        get: operations["getRecordsCollection"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/records/{collection}/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read one record
         * @description Scope: `read` or `commit` or `propose` or `approve` (`admin` holds every scope).
         *
         *     A deleted record is 404 with `currentVersion`.
         */
        get: operations["getRecordsCollectionId"];
        /**
         * Write one record (and its events)
         * @description Scope: `commit` (`admin` holds every scope).
         *
         *     Events default to this record's aggregate. `If-Match` must name the current version (else 412); `If-None-Match: *` requires that the record never existed; neither header = unconditional.
         */
        put: operations["putRecordsCollectionId"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/records/{collection}/{id}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every version of a record, newest first
         * @description Scope: `read` or `commit` (`admin` holds every scope).
         *
         *     Each version with the commit that wrote it, who committed it (`committedBy`), when, and the events that commit inserted. `data` is null for a delete, and for an erased version (`erased: true`, an outboxd extension, as is `proposalId`). Versions taken over by the ledger migration have `commitId: null` and `committedBy: null`. A record that never existed is 404. `limit` is 1-500 (default 100); pass `next` as `after` for the next page.
         */
        get: operations["getRecordsCollectionIdHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The state of the outbox
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     `pending` counts every undelivered, non-dead delivery (in flight included: for a pull endpoint, leased to a consumer); the oldest pending age is measured from the later of the commit and `deliverAfter`.
         */
        get: operations["getStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Throughput and latency per minute over the last hour
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     outboxd extension (dashboard). 60 buckets, oldest first, the current minute last: deliveries marked delivered in that minute and their latency from becoming due (the later of commit and `deliverAfter`, or the replay) to delivered; the median to two significant digits.
         */
        get: operations["getStatsHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List tokens (never their secrets)
         * @description Scope: `read` (`admin` holds every scope).
         *
         *     Newest first. `limit` is 1-500 (default 100); pass `next` of a page as `after` for the next.
         */
        get: operations["getTokens"];
        put?: never;
        /**
         * Create an API token
         * @description Scope: `admin` (`admin` holds every scope).
         *
         *     The answer is the only time the token is shown.
         */
        post: operations["postTokens"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tokens/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke a token
         * @description Scope: `admin` (`admin` holds every scope).
         */
        delete: operations["deleteTokensId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/whoami": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The calling token: its id, name and scopes
         * @description Scope: `read` or `commit` or `propose` or `approve` or `consume` (`admin` holds every scope).
         *
         *     outboxd extension: what `outboxd mcp` asks at start, to list the tools the token allows. Any token.
         */
        get: operations["getWhoami"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "outboxd.endpoint.disabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An endpoint was disabled: by an operator, by a 410 Gone answer, or after failing for its disableAfter. Delivered only to endpoints whose eventTypes name an outboxd.* pattern, never to the endpoint it is about.
         * @description An endpoint was disabled: by an operator, by a 410 Gone answer, or after failing for its disableAfter. Delivered only to endpoints whose eventTypes name an outboxd.* pattern, never to the endpoint it is about.
         */
        post: operations["webhook:outboxd.endpoint.disabled"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "outboxd.endpoint.enabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A disabled endpoint was enabled again (enable, PATCH, or recover). Delivered only to endpoints whose eventTypes name an outboxd.* pattern, never to the endpoint it is about.
         * @description A disabled endpoint was enabled again (enable, PATCH, or recover). Delivered only to endpoints whose eventTypes name an outboxd.* pattern, never to the endpoint it is about.
         */
        post: operations["webhook:outboxd.endpoint.enabled"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "outboxd.ping": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The signed test event POST /v1/endpoints/{id}/test sends now; never stored.
         * @description The signed test event POST /v1/endpoints/{id}/test sends now; never stored.
         */
        post: operations["webhook:outboxd.ping"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        Attempt: {
            /** Format: date-time */
            at: string;
            durationMs: number;
            error: string | null;
            responsePrefix: string | null;
            statusCode: number | null;
        };
        CommitRequest: {
            events?: components["schemas"]["Event"][] | null;
            records?: components["schemas"]["RecordWrite"][] | null;
        };
        CommitResponse: {
            commitId: string;
            events: components["schemas"]["CommittedEvent"][];
            records: {
                collection: string;
                deleted: boolean;
                id: string;
                version: number;
            }[];
        };
        CommittedEvent: {
            aggregate: string;
            /** Format: date-time */
            deliverBy: string;
            deliveries: {
                endpointId: string;
                id: string;
            }[];
            id: string;
            sequence: number;
            type: string;
        };
        Delivery: {
            aggregate: string;
            attemptCount: number;
            deadReason: string | null;
            deliveredAt: string | null;
            endpointId: string;
            eventId: string;
            id: string;
            lastError: string | null;
            lastStatusCode: number | null;
            nextAttemptAt: string | null;
            sequence: number;
            /** @enum {string} */
            status: "pending" | "delivered" | "dead";
            type: string;
        };
        DeliveryInEvent: {
            attemptCount: number;
            deadReason: string | null;
            deliveredAt: string | null;
            endpointId: string;
            id: string;
            lastError: string | null;
            lastStatusCode: number | null;
            nextAttemptAt: string | null;
            /** @enum {string} */
            status: "pending" | "delivered" | "dead";
        };
        Duration: string;
        Endpoint: {
            /** Format: date-time */
            createdAt: string;
            dead: number;
            description: string | null;
            disableAfter: string;
            disabled: boolean;
            disabledAt: string | null;
            disabledDetail: string | null;
            /** @description Why it is disabled: by an operator, a 410 Gone answer, or failing for disableAfter. */
            disabledReason: ("operator" | "gone" | "failing") | null;
            eventTypes: string[];
            /** @description The first failed attempt after the latest 2xx, enable or creation. */
            failingSince: string | null;
            filter: {
                /** @enum {string} */
                op: "eq" | "ne" | "in" | "exists" | "prefix" | "gt" | "lt";
                path: string;
                value: unknown;
            }[] | null;
            id: string;
            /**
             * @description `pull`: consumers poll or stream (DESIGN §12).
             * @enum {string}
             */
            kind: "webhook" | "pull";
            lastFailureAt: string | null;
            lastSuccessAt: string | null;
            pending: number;
            rateLimit: {
                burst: number;
                perSecond: number;
            } | null;
            retrySchedule: string[] | null;
            /** @description null for a pull endpoint. */
            url: string | null;
        };
        EndpointCreateRequest: {
            description?: string | null;
            disableAfter?: string | null;
            eventTypes?: string[] | null;
            filter?: {
                /** @enum {string} */
                op: "eq" | "ne" | "in" | "exists" | "prefix" | "gt" | "lt";
                path: string;
                value: unknown;
            }[] | null;
            kind?: ("webhook" | "pull") | null;
            rateLimit?: {
                burst?: number | null;
                perSecond: number;
            } | null;
            retrySchedule?: string[] | null;
            secret?: string | null;
            url?: string | null;
        };
        EndpointPatchRequest: {
            description?: string | null;
            disableAfter?: string | null;
            disabled?: boolean | null;
            eventTypes?: string[] | null;
            filter?: {
                /** @enum {string} */
                op: "eq" | "ne" | "in" | "exists" | "prefix" | "gt" | "lt";
                path: string;
                value: unknown;
            }[] | null;
            rateLimit?: {
                burst?: number | null;
                perSecond: number;
            } | null;
            retrySchedule?: string[] | null;
            url?: string | null;
        };
        Event: {
            aggregate?: string | null;
            deliverAfter?: components["schemas"]["Timestamp"] | null;
            deliverBy?: components["schemas"]["Timestamp"] | null;
            deliverWithin?: components["schemas"]["Duration"] | null;
            endpoints?: string[] | null;
            id?: string | null;
            payload?: unknown | null;
            type: string;
        };
        EventResponse: {
            aggregate: string;
            commitId: string;
            deliverAfter: string | null;
            /** Format: date-time */
            deliverBy: string;
            deliveries: components["schemas"]["DeliveryInEvent"][];
            id: string;
            /** Format: date-time */
            occurredAt: string;
            payload: unknown;
            sequence: number;
            type: string;
        };
        EventTypePutRequest: {
            deprecated?: boolean | null;
            description?: string | null;
            schema?: (Record<string, unknown> | boolean) | null;
        };
        /** @description RFC 9457 problem details (`application/problem+json`). */
        Problem: {
            /** @description On 409 version conflicts, 412 and 404 of a deleted record (null: never existed). */
            currentVersion?: number | null;
            detail: string;
            errors?: {
                detail: string;
                /** @description JSON Pointer into the request, e.g. `/records/0/id`. */
                pointer: string;
            }[];
            status: number;
            title: string;
            /** Format: uri */
            type: string;
        };
        Proposal: {
            commit: components["schemas"]["CommitRequest"];
            /** Format: date-time */
            createdAt: string;
            decidedAt: string | null;
            decidedBy: {
                tokenId: string;
                tokenName: string;
            } | null;
            /** Format: date-time */
            expiresAt: string;
            id: string;
            proposedBy: {
                tokenId: string;
                tokenName: string;
            };
            reason: string | null;
            /** @description Approved: the commit response; conflicted: the problem; otherwise null. */
            result: (components["schemas"]["CommitResponse"] | components["schemas"]["Problem"]) | null;
            /** @enum {string} */
            status: "pending" | "approved" | "rejected" | "conflicted" | "expired";
            summary: string;
        };
        ProposalCreateRequest: {
            commit: components["schemas"]["CommitRequest"];
            expiresIn?: components["schemas"]["Duration"] | null;
            summary: string;
        };
        ProposalDecisionRequest: {
            reason?: string | null;
        };
        PutRecordRequest: {
            data: Record<string, unknown>;
            events?: components["schemas"]["Event"][] | null;
        };
        Record: {
            collection: string;
            /** Format: date-time */
            createdAt: string;
            data: {
                [key: string]: unknown;
            };
            id: string;
            /** Format: date-time */
            updatedAt: string;
            version: number;
        };
        RecordWrite: {
            collection: string;
            data?: Record<string, unknown> | null;
            delete?: boolean | null;
            expectedVersion?: number | null;
            id: string;
        };
        ReplayManyRequest: {
            deliverWithin?: components["schemas"]["Duration"] | null;
            endpoint?: string | null;
            reason?: string | null;
            since?: components["schemas"]["Timestamp"] | null;
            /** @constant */
            status: "dead";
        };
        ReplayRequest: {
            deliverWithin?: components["schemas"]["Duration"] | null;
        };
        /** Format: date-time */
        Timestamp: string;
        Token: {
            /** Format: date-time */
            createdAt: string;
            id: string;
            lastUsedAt: string | null;
            name: string;
            revokedAt: string | null;
            scopes: ("read" | "commit" | "propose" | "approve" | "consume" | "admin")[];
        };
        TokenCreateRequest: {
            name: string;
            scopes: ("read" | "commit" | "propose" | "approve" | "consume" | "admin")[];
        };
    };
    responses: {
        /** @description The body exceeds `OUTBOXD_MAX_BODY_BYTES`. */
        BodyTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Conflict: a version conflict (with `currentVersion`), a reused event id, an idempotency key still in progress, or a delivery in the wrong state. */
        Conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The token lacks the scope. */
        Forbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description A schema or rule violation; `errors` points into the request. */
        Invalid: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Malformed JSON. */
        MalformedJson: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Not found. */
        NotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description `If-Match` / `If-None-Match` failed (with `currentVersion`). */
        PreconditionFailed: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The token sent more than `OUTBOXD_RATE_LIMIT` requests a second; retry after `Retry-After` seconds. */
        RateLimited: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Missing or unknown token. */
        Unauthorized: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Unavailable: the database was busy past its timeout or could not be reached (nothing was written), or the route needs a dispatcher this process does not run; retry (after `Retry-After` when given). */
        Unavailable: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getDashboard: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    getDocs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    getHealthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Up. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok"
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        status: "ok";
                    };
                };
            };
        };
    };
    getMcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Not offered: POST only (`Allow: POST`). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    postMcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The JSON-RPC answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        jsonrpc: "2.0";
                    } | {
                        /** @constant */
                        jsonrpc: "2.0";
                    }[];
                };
            };
            /** @description A notification or answer was accepted. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    deleteMcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Not offered: POST only (`Allow: POST`). */
            405: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Prometheus text format. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getOpenapiJson: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OpenAPI 3.1. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        components: Record<string, unknown>;
                        info: {
                            title: string;
                            version: string;
                        };
                        openapi: string;
                        paths: {
                            [key: string]: {
                                [key: string]: unknown;
                            };
                        };
                    };
                };
            };
        };
    };
    getReadyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ready",
                     *       "checks": {
                     *         "database": "ok",
                     *         "migrations": "ok",
                     *         "dispatcher": "ok"
                     *       }
                     *     }
                     */
                    "application/json": {
                        checks: {
                            [key: string]: string;
                        };
                        /** @enum {string} */
                        status: "ready" | "not ready";
                    };
                };
            };
            /** @description Not ready: `checks` says which check failed. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "not ready",
                     *       "checks": {
                     *         "database": "ok",
                     *         "migrations": "ok",
                     *         "dispatcher": "heartbeat stale"
                     *       }
                     *     }
                     */
                    "application/json": {
                        checks: {
                            [key: string]: string;
                        };
                        /** @enum {string} */
                        status: "ready" | "not ready";
                    };
                };
            };
        };
    };
    getSnippetVerifyJs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description JavaScript source. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                };
            };
        };
    };
    getSnippetVerifyTs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description TypeScript source. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/typescript": string;
                };
            };
        };
    };
    getAttempts: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of attempts, each with its delivery and event. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "at": "2026-11-29T10:00:00.000Z",
                     *           "durationMs": 42,
                     *           "statusCode": 200,
                     *           "error": null,
                     *           "responsePrefix": "{\"result\":\"applied\"}",
                     *           "deliveryId": "dlv_01JDZ8V7M2Q4",
                     *           "endpointId": "ep_01JDZ8V7M2Q4",
                     *           "eventId": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *           "type": "return.approved",
                     *           "aggregate": "returns/r-123",
                     *           "sequence": 7
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            aggregate: string | null;
                            /** Format: date-time */
                            at: string;
                            deliveryId: string;
                            durationMs: number;
                            endpointId: string | null;
                            error: string | null;
                            eventId: string | null;
                            responsePrefix: string | null;
                            sequence: number | null;
                            statusCode: number | null;
                            type: string | null;
                        }[];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postCommits: {
        parameters: {
            query?: never;
            header?: {
                /** @description Up to 255 characters, scoped to the token. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "records": [
                 *         {
                 *           "collection": "returns",
                 *           "id": "r-123",
                 *           "expectedVersion": 3,
                 *           "data": {
                 *             "status": "approved"
                 *           }
                 *         },
                 *         {
                 *           "collection": "returns",
                 *           "id": "r-124",
                 *           "expectedVersion": 1,
                 *           "delete": true
                 *         }
                 *       ],
                 *       "events": [
                 *         {
                 *           "type": "return.approved",
                 *           "aggregate": "returns/r-123",
                 *           "payload": {
                 *             "returnId": "r-123",
                 *             "approvedBy": "u-9"
                 *           },
                 *           "deliverWithin": "24h"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["CommitRequest"];
            };
        };
        responses: {
            /** @description Committed: the records' new versions and the events with their deliveries. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "commitId": "cmt_01JDZ8V7M2Q4",
                     *       "records": [
                     *         {
                     *           "collection": "returns",
                     *           "id": "r-123",
                     *           "version": 4,
                     *           "deleted": false
                     *         }
                     *       ],
                     *       "events": [
                     *         {
                     *           "id": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *           "type": "return.approved",
                     *           "aggregate": "returns/r-123",
                     *           "sequence": 7,
                     *           "deliverBy": "2026-11-29T10:00:00.000Z",
                     *           "deliveries": [
                     *             {
                     *               "id": "dlv_01JDZ8V7M2Q4",
                     *               "endpointId": "ep_01JDZ8V7M2Q4"
                     *             }
                     *           ]
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["CommitResponse"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getDeliveries: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Only deliveries to this endpoint id. */
                endpoint?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
                /** @description Only dead deliveries with this reason, e.g. deadline_exceeded. */
                reason?: string;
                /** @description pending, delivered or dead. */
                status?: "pending" | "delivered" | "dead";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "dlv_01JDZ8V7M2Q4",
                     *           "endpointId": "ep_01JDZ8V7M2Q4",
                     *           "status": "dead",
                     *           "attemptCount": 12,
                     *           "nextAttemptAt": null,
                     *           "lastStatusCode": 500,
                     *           "lastError": "HTTP 500",
                     *           "deliveredAt": null,
                     *           "deadReason": "deadline_exceeded",
                     *           "eventId": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *           "type": "return.approved",
                     *           "aggregate": "returns/r-123",
                     *           "sequence": 7
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Delivery"][];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getDeliveriesId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dlv_01JDZ8V7M2Q4",
                     *       "endpointId": "ep_01JDZ8V7M2Q4",
                     *       "status": "dead",
                     *       "attemptCount": 12,
                     *       "nextAttemptAt": null,
                     *       "lastStatusCode": 500,
                     *       "lastError": "HTTP 500",
                     *       "deliveredAt": null,
                     *       "deadReason": "deadline_exceeded",
                     *       "eventId": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *       "type": "return.approved",
                     *       "aggregate": "returns/r-123",
                     *       "sequence": 7
                     *     }
                     */
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getDeliveriesIdAttempts: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every attempt kept. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "at": "2026-11-29T10:00:00.000Z",
                     *         "durationMs": 42,
                     *         "statusCode": 200,
                     *         "error": null,
                     *         "responsePrefix": "{\"result\":\"applied\"}"
                     *       }
                     *     ]
                     */
                    "application/json": components["schemas"]["Attempt"][];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postDeliveriesIdCancel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery, now dead. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dlv_01JDZ8V7M2Q4",
                     *       "endpointId": "ep_01JDZ8V7M2Q4",
                     *       "status": "dead",
                     *       "attemptCount": 12,
                     *       "nextAttemptAt": null,
                     *       "lastStatusCode": 500,
                     *       "lastError": "HTTP 500",
                     *       "deliveredAt": null,
                     *       "deadReason": "cancelled",
                     *       "eventId": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *       "type": "return.approved",
                     *       "aggregate": "returns/r-123",
                     *       "sequence": 7
                     *     }
                     */
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postDeliveriesIdReplay: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "deliverWithin": "1h"
                 *     }
                 */
                "application/json": components["schemas"]["ReplayRequest"];
            };
        };
        responses: {
            /** @description The delivery, pending again. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "dlv_01JDZ8V7M2Q4",
                     *       "endpointId": "ep_01JDZ8V7M2Q4",
                     *       "status": "pending",
                     *       "attemptCount": 0,
                     *       "nextAttemptAt": "2026-11-29T10:00:00.000Z",
                     *       "lastStatusCode": 500,
                     *       "lastError": "HTTP 500",
                     *       "deliveredAt": null,
                     *       "deadReason": null,
                     *       "eventId": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *       "type": "return.approved",
                     *       "aggregate": "returns/r-123",
                     *       "sequence": 7
                     *     }
                     */
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postDeliveriesReplay: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "status": "dead",
                 *       "endpoint": "ep_01JDZ8V7M2Q4",
                 *       "reason": "deadline_exceeded"
                 *     }
                 */
                "application/json": components["schemas"]["ReplayManyRequest"];
            };
        };
        responses: {
            /** @description How many went back to pending. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "replayed": 3
                     *     }
                     */
                    "application/json": {
                        replayed: number;
                    };
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getEndpoints: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of endpoints (no secrets). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "ep_01JDZ8V7M2Q4",
                     *           "kind": "webhook",
                     *           "url": "https://returns.example.com/hooks/outboxd",
                     *           "eventTypes": [
                     *             "return.*"
                     *           ],
                     *           "description": "returns service",
                     *           "disabled": false,
                     *           "disabledReason": null,
                     *           "disabledDetail": null,
                     *           "disabledAt": null,
                     *           "createdAt": "2026-11-29T10:00:00.000Z",
                     *           "lastSuccessAt": "2026-11-29T10:00:00.000Z",
                     *           "lastFailureAt": null,
                     *           "rateLimit": {
                     *             "perSecond": 50,
                     *             "burst": 100
                     *           },
                     *           "retrySchedule": [
                     *             "5s",
                     *             "30s",
                     *             "2m",
                     *             "10m",
                     *             "1h"
                     *           ],
                     *           "disableAfter": "5d",
                     *           "failingSince": null,
                     *           "filter": [
                     *             {
                     *               "path": "/data/status",
                     *               "op": "in",
                     *               "value": [
                     *                 "approved",
                     *                 "refunded"
                     *               ]
                     *             }
                     *           ],
                     *           "pending": 0,
                     *           "dead": 0
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Endpoint"][];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postEndpoints: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://returns.example.com/hooks/outboxd",
                 *       "eventTypes": [
                 *         "return.*"
                 *       ],
                 *       "rateLimit": {
                 *         "perSecond": 50,
                 *         "burst": 100
                 *       },
                 *       "retrySchedule": [
                 *         "5s",
                 *         "30s",
                 *         "2m",
                 *         "10m",
                 *         "1h"
                 *       ],
                 *       "filter": [
                 *         {
                 *           "path": "/data/status",
                 *           "op": "in",
                 *           "value": [
                 *             "approved",
                 *             "refunded"
                 *           ]
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["EndpointCreateRequest"];
            };
        };
        responses: {
            /** @description Created, with its signing secret. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "ep_01JDZ8V7M2Q4",
                     *       "kind": "webhook",
                     *       "url": "https://returns.example.com/hooks/outboxd",
                     *       "eventTypes": [
                     *         "return.*"
                     *       ],
                     *       "description": "returns service",
                     *       "disabled": false,
                     *       "disabledReason": null,
                     *       "disabledDetail": null,
                     *       "disabledAt": null,
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "lastSuccessAt": null,
                     *       "lastFailureAt": null,
                     *       "rateLimit": {
                     *         "perSecond": 50,
                     *         "burst": 100
                     *       },
                     *       "retrySchedule": [
                     *         "5s",
                     *         "30s",
                     *         "2m",
                     *         "10m",
                     *         "1h"
                     *       ],
                     *       "disableAfter": "5d",
                     *       "failingSince": null,
                     *       "filter": [
                     *         {
                     *           "path": "/data/status",
                     *           "op": "in",
                     *           "value": [
                     *             "approved",
                     *             "refunded"
                     *           ]
                     *         }
                     *       ],
                     *       "pending": 0,
                     *       "dead": 0,
                     *       "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        dead: number;
                        description: string | null;
                        disableAfter: string;
                        disabled: boolean;
                        disabledAt: string | null;
                        disabledDetail: string | null;
                        /** @description Why it is disabled: by an operator, a 410 Gone answer, or failing for disableAfter. */
                        disabledReason: ("operator" | "gone" | "failing") | null;
                        eventTypes: string[];
                        /** @description The first failed attempt after the latest 2xx, enable or creation. */
                        failingSince: string | null;
                        filter: {
                            /** @enum {string} */
                            op: "eq" | "ne" | "in" | "exists" | "prefix" | "gt" | "lt";
                            path: string;
                            value: unknown;
                        }[] | null;
                        id: string;
                        /**
                         * @description `pull`: consumers poll or stream (DESIGN §12).
                         * @enum {string}
                         */
                        kind: "webhook" | "pull";
                        lastFailureAt: string | null;
                        lastSuccessAt: string | null;
                        pending: number;
                        rateLimit: {
                            burst: number;
                            perSecond: number;
                        } | null;
                        retrySchedule: string[] | null;
                        /** @description The signing secret; absent for a pull endpoint. */
                        secret?: string;
                        /** @description null for a pull endpoint. */
                        url: string | null;
                    };
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getEndpointsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint (no secrets). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "ep_01JDZ8V7M2Q4",
                     *       "kind": "webhook",
                     *       "url": "https://returns.example.com/hooks/outboxd",
                     *       "eventTypes": [
                     *         "return.*"
                     *       ],
                     *       "description": "returns service",
                     *       "disabled": false,
                     *       "disabledReason": null,
                     *       "disabledDetail": null,
                     *       "disabledAt": null,
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "lastSuccessAt": "2026-11-29T10:00:00.000Z",
                     *       "lastFailureAt": null,
                     *       "rateLimit": {
                     *         "perSecond": 50,
                     *         "burst": 100
                     *       },
                     *       "retrySchedule": [
                     *         "5s",
                     *         "30s",
                     *         "2m",
                     *         "10m",
                     *         "1h"
                     *       ],
                     *       "disableAfter": "5d",
                     *       "failingSince": null,
                     *       "filter": [
                     *         {
                     *           "path": "/data/status",
                     *           "op": "in",
                     *           "value": [
                     *             "approved",
                     *             "refunded"
                     *           ]
                     *         }
                     *       ],
                     *       "pending": 0,
                     *       "dead": 0
                     *     }
                     */
                    "application/json": components["schemas"]["Endpoint"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    deleteEndpointsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "ep_01JDZ8V7M2Q4",
                     *       "deleted": true,
                     *       "deadLettered": 0
                     *     }
                     */
                    "application/json": {
                        deadLettered: number;
                        /** @constant */
                        deleted: true;
                        id: string;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    patchEndpointsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "disabled": true
                 *     }
                 */
                "application/json": components["schemas"]["EndpointPatchRequest"];
            };
        };
        responses: {
            /** @description The changed endpoint. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "ep_01JDZ8V7M2Q4",
                     *       "kind": "webhook",
                     *       "url": "https://returns.example.com/hooks/outboxd",
                     *       "eventTypes": [
                     *         "return.*"
                     *       ],
                     *       "description": "returns service",
                     *       "disabled": true,
                     *       "disabledReason": "operator",
                     *       "disabledDetail": "disabled by an operator",
                     *       "disabledAt": "2026-11-29T10:00:00.000Z",
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "lastSuccessAt": "2026-11-29T10:00:00.000Z",
                     *       "lastFailureAt": null,
                     *       "rateLimit": {
                     *         "perSecond": 50,
                     *         "burst": 100
                     *       },
                     *       "retrySchedule": [
                     *         "5s",
                     *         "30s",
                     *         "2m",
                     *         "10m",
                     *         "1h"
                     *       ],
                     *       "disableAfter": "5d",
                     *       "failingSince": null,
                     *       "filter": [
                     *         {
                     *           "path": "/data/status",
                     *           "op": "in",
                     *           "value": [
                     *             "approved",
                     *             "refunded"
                     *           ]
                     *         }
                     *       ],
                     *       "pending": 0,
                     *       "dead": 0
                     *     }
                     */
                    "application/json": components["schemas"]["Endpoint"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postEndpointsIdAck: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "acks": [
                 *         {
                 *           "deliveryId": "dlv_01JDZ8V7M2Q4",
                 *           "leaseToken": "lt_9f2c4e1a7b3d5f60a1b2c3d4e5f60718"
                 *         }
                 *       ],
                 *       "nacks": [
                 *         {
                 *           "deliveryId": "dlv_01JDZ8V7M2Q5",
                 *           "leaseToken": "lt_9f2c4e1a7b3d5f60a1b2c3d4e5f60718",
                 *           "retryAfter": "30s"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    acks?: {
                        deliveryId: string;
                        leaseToken: string;
                    }[] | null;
                    nacks?: {
                        deliveryId: string;
                        leaseToken: string;
                        retryAfter?: string | null;
                    }[] | null;
                };
            };
        };
        responses: {
            /** @description What was acknowledged, refused, and found stale. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "acked": 1,
                     *       "nacked": 1,
                     *       "stale": []
                     *     }
                     */
                    "application/json": {
                        acked: number;
                        nacked: number;
                        /** @description Deliveries whose lease was lost, unknown ids and other endpoints' deliveries: nothing changed. */
                        stale: string[];
                    };
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postEndpointsIdEnable: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "ep_01JDZ8V7M2Q4",
                     *       "kind": "webhook",
                     *       "url": "https://returns.example.com/hooks/outboxd",
                     *       "eventTypes": [
                     *         "return.*"
                     *       ],
                     *       "description": "returns service",
                     *       "disabled": false,
                     *       "disabledReason": null,
                     *       "disabledDetail": null,
                     *       "disabledAt": null,
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "lastSuccessAt": "2026-11-29T10:00:00.000Z",
                     *       "lastFailureAt": null,
                     *       "rateLimit": {
                     *         "perSecond": 50,
                     *         "burst": 100
                     *       },
                     *       "retrySchedule": [
                     *         "5s",
                     *         "30s",
                     *         "2m",
                     *         "10m",
                     *         "1h"
                     *       ],
                     *       "disableAfter": "5d",
                     *       "failingSince": null,
                     *       "filter": [
                     *         {
                     *           "path": "/data/status",
                     *           "op": "in",
                     *           "value": [
                     *             "approved",
                     *             "refunded"
                     *           ]
                     *         }
                     *       ],
                     *       "pending": 0,
                     *       "dead": 0
                     *     }
                     */
                    "application/json": components["schemas"]["Endpoint"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postEndpointsIdPoll: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "max": 100,
                 *       "wait": "20s",
                 *       "lease": "60s"
                 *     }
                 */
                "application/json": {
                    lease?: string | null;
                    max?: number | null;
                    wait?: string | null;
                };
            };
        };
        responses: {
            /** @description The leased deliveries (possibly none). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "deliveryId": "dlv_01JDZ8V7M2Q4",
                     *           "leaseToken": "lt_9f2c4e1a7b3d5f60a1b2c3d4e5f60718",
                     *           "attempt": 1,
                     *           "event": {
                     *             "id": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *             "type": "return.approved",
                     *             "timestamp": "2026-11-29T10:00:00.000Z",
                     *             "aggregate": "returns/r-123",
                     *             "sequence": 7,
                     *             "previousSequence": 6,
                     *             "data": {
                     *               "returnId": "r-123"
                     *             }
                     *           }
                     *         }
                     *       ],
                     *       "leaseExpiresAt": "2026-11-29T10:00:00.000Z"
                     *     }
                     */
                    "application/json": {
                        data: {
                            attempt: number;
                            deliveryId: string;
                            event: {
                                aggregate: string;
                                data: unknown;
                                id: string;
                                /** @description The same aggregate's latest earlier sequence with a delivery to this endpoint, else null (DESIGN §19). */
                                previousSequence: number | null;
                                sequence: number;
                                /** Format: date-time */
                                timestamp: string;
                                type: string;
                            };
                            /** @description Send it back with the ack or nack: it fences the answer. */
                            leaseToken: string;
                        }[];
                        /** @description When the leases of `data` run out; null when empty. */
                        leaseExpiresAt: string | null;
                    };
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postEndpointsIdRecover: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "since": "2026-11-29T10:00:00.000Z",
                 *       "deliverWithin": "24h"
                 *     }
                 */
                "application/json": {
                    deliverWithin?: components["schemas"]["Duration"] | null;
                    since: components["schemas"]["Timestamp"];
                    until?: components["schemas"]["Timestamp"] | null;
                };
            };
        };
        responses: {
            /** @description How many went back to pending, how many were skipped. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "replayed": 120,
                     *       "skipped": 0,
                     *       "enabled": true
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        enabled: true;
                        replayed: number;
                        /** @description Dead deliveries in the range whose event was erased: not replayable. */
                        skipped: number;
                    };
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postEndpointsIdRotateSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The new secret. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
                     *     }
                     */
                    "application/json": {
                        secret: string;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getEndpointsIdSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The current secret and the older ones still signing. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                     *       "previous": []
                     *     }
                     */
                    "application/json": {
                        previous: string[];
                        secret: string;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getEndpointsIdStream: {
        parameters: {
            query?: {
                lease?: string;
                max?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event stream (`text/event-stream`), open until the client closes it. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example event: delivery
                     *     id: dlv_01JDZ8V7M2Q4
                     *     data: {"deliveryId":"dlv_01JDZ8V7M2Q4","leaseToken":"lt_9f2c4e1a7b3d5f60a1b2c3d4e5f60718","attempt":1,"event":{"id":"0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a","type":"return.approved","timestamp":"2026-11-29T10:00:00.000Z","aggregate":"returns/r-123","sequence":7,"previousSequence":6,"data":{"returnId":"r-123"}}}
                     */
                    "text/event-stream": string;
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postEndpointsIdTest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The receiver's answer. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "statusCode": 200,
                     *       "error": null,
                     *       "durationMs": 12,
                     *       "responsePrefix": "{\"result\":\"applied\"}"
                     *     }
                     */
                    "application/json": {
                        durationMs: number;
                        error: string | null;
                        responsePrefix: string | null;
                        statusCode: number | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getEventTypes: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of event types. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "type": "refund.issued",
                     *           "description": "A refund was issued for an approved return.",
                     *           "schema": {
                     *             "type": "object",
                     *             "properties": {
                     *               "returnId": {
                     *                 "type": "string"
                     *               },
                     *               "amount": {
                     *                 "type": "integer",
                     *                 "minimum": 0
                     *               }
                     *             },
                     *             "required": [
                     *               "returnId",
                     *               "amount"
                     *             ]
                     *           },
                     *           "deprecated": false,
                     *           "deprecatedAt": null,
                     *           "createdAt": "2026-11-29T10:00:00.000Z",
                     *           "updatedAt": "2026-11-29T10:00:00.000Z"
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: date-time */
                            createdAt: string;
                            deprecated: boolean;
                            deprecatedAt: string | null;
                            description: string | null;
                            /** @description The payload's JSON Schema (draft 2020-12), or null. */
                            schema: unknown;
                            type: string;
                            /** Format: date-time */
                            updatedAt: string;
                        }[];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getEventTypesType: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                type: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event type. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "refund.issued",
                     *       "description": "A refund was issued for an approved return.",
                     *       "schema": {
                     *         "type": "object",
                     *         "properties": {
                     *           "returnId": {
                     *             "type": "string"
                     *           },
                     *           "amount": {
                     *             "type": "integer",
                     *             "minimum": 0
                     *           }
                     *         },
                     *         "required": [
                     *           "returnId",
                     *           "amount"
                     *         ]
                     *       },
                     *       "deprecated": false,
                     *       "deprecatedAt": null,
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "updatedAt": "2026-11-29T10:00:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        deprecated: boolean;
                        deprecatedAt: string | null;
                        description: string | null;
                        /** @description The payload's JSON Schema (draft 2020-12), or null. */
                        schema: unknown;
                        type: string;
                        /** Format: date-time */
                        updatedAt: string;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    putEventTypesType: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                type: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "description": "A refund was issued for an approved return.",
                 *       "schema": {
                 *         "type": "object",
                 *         "properties": {
                 *           "returnId": {
                 *             "type": "string"
                 *           },
                 *           "amount": {
                 *             "type": "integer",
                 *             "minimum": 0
                 *           }
                 *         },
                 *         "required": [
                 *           "returnId",
                 *           "amount"
                 *         ]
                 *       },
                 *       "deprecated": false
                 *     }
                 */
                "application/json": components["schemas"]["EventTypePutRequest"];
            };
        };
        responses: {
            /** @description Replaced. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "refund.issued",
                     *       "description": "A refund was issued for an approved return.",
                     *       "schema": {
                     *         "type": "object",
                     *         "properties": {
                     *           "returnId": {
                     *             "type": "string"
                     *           },
                     *           "amount": {
                     *             "type": "integer",
                     *             "minimum": 0
                     *           }
                     *         },
                     *         "required": [
                     *           "returnId",
                     *           "amount"
                     *         ]
                     *       },
                     *       "deprecated": false,
                     *       "deprecatedAt": null,
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "updatedAt": "2026-11-29T10:00:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        deprecated: boolean;
                        deprecatedAt: string | null;
                        description: string | null;
                        /** @description The payload's JSON Schema (draft 2020-12), or null. */
                        schema: unknown;
                        type: string;
                        /** Format: date-time */
                        updatedAt: string;
                    };
                };
            };
            /** @description Registered. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "type": "refund.issued",
                     *       "description": "A refund was issued for an approved return.",
                     *       "schema": {
                     *         "type": "object",
                     *         "properties": {
                     *           "returnId": {
                     *             "type": "string"
                     *           },
                     *           "amount": {
                     *             "type": "integer",
                     *             "minimum": 0
                     *           }
                     *         },
                     *         "required": [
                     *           "returnId",
                     *           "amount"
                     *         ]
                     *       },
                     *       "deprecated": false,
                     *       "deprecatedAt": null,
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "updatedAt": "2026-11-29T10:00:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        deprecated: boolean;
                        deprecatedAt: string | null;
                        description: string | null;
                        /** @description The payload's JSON Schema (draft 2020-12), or null. */
                        schema: unknown;
                        type: string;
                        /** Format: date-time */
                        updatedAt: string;
                    };
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    deleteEventTypesType: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                type: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getEvents: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Only this aggregate, ordered by sequence. */
                aggregate?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
                /** @description Only events of this type. */
                type?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *           "type": "return.approved",
                     *           "aggregate": "returns/r-123",
                     *           "sequence": 7,
                     *           "payload": {
                     *             "returnId": "r-123"
                     *           },
                     *           "occurredAt": "2026-11-29T10:00:00.000Z",
                     *           "deliverAfter": null,
                     *           "deliverBy": "2026-11-29T10:00:00.000Z",
                     *           "commitId": "cmt_01JDZ8V7M2Q4",
                     *           "deliveries": [
                     *             {
                     *               "id": "dlv_01JDZ8V7M2Q4",
                     *               "endpointId": "ep_01JDZ8V7M2Q4",
                     *               "status": "delivered",
                     *               "attemptCount": 1,
                     *               "nextAttemptAt": null,
                     *               "lastStatusCode": 200,
                     *               "lastError": null,
                     *               "deliveredAt": "2026-11-29T10:00:00.000Z",
                     *               "deadReason": null
                     *             }
                     *           ]
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["EventResponse"][];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getEventsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *       "type": "return.approved",
                     *       "aggregate": "returns/r-123",
                     *       "sequence": 7,
                     *       "payload": {
                     *         "returnId": "r-123"
                     *       },
                     *       "occurredAt": "2026-11-29T10:00:00.000Z",
                     *       "deliverAfter": null,
                     *       "deliverBy": "2026-11-29T10:00:00.000Z",
                     *       "commitId": "cmt_01JDZ8V7M2Q4",
                     *       "deliveries": [
                     *         {
                     *           "id": "dlv_01JDZ8V7M2Q4",
                     *           "endpointId": "ep_01JDZ8V7M2Q4",
                     *           "status": "delivered",
                     *           "attemptCount": 1,
                     *           "nextAttemptAt": null,
                     *           "lastStatusCode": 200,
                     *           "lastError": null,
                     *           "deliveredAt": "2026-11-29T10:00:00.000Z",
                     *           "deadReason": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["EventResponse"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getLedger: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The head of the chain. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "commits": 42,
                     *       "head": {
                     *         "seq": 41,
                     *         "commitId": "cmt_01JDZ8V7M2Q4",
                     *         "hash": "3b7e0c5f1d2a4e6b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d",
                     *         "at": "2026-11-29T10:00:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        commits: number;
                        head: {
                            /** Format: date-time */
                            at: string;
                            commitId: string;
                            /** @description Lowercase hex sha256. */
                            hash: string;
                            seq: number;
                        } | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getLedgerCommits: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of chain entries. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "seq": 41,
                     *           "commitId": "cmt_01JDZ8V7M2Q4",
                     *           "hash": "3b7e0c5f1d2a4e6b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d",
                     *           "previousHash": "9f2c4e6a8b0d1f3e5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f",
                     *           "at": "2026-11-29T10:00:00.000Z"
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: date-time */
                            at: string;
                            commitId: string;
                            /** @description Lowercase hex sha256. */
                            hash: string;
                            /** @description Lowercase hex sha256. */
                            previousHash: string;
                            seq: number;
                        }[];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getProposals: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
                /** @description pending, delivered or dead. */
                status?: "pending" | "approved" | "rejected" | "conflicted" | "expired";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of proposals. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "prp_01JDZ8V7M2Q4",
                     *           "status": "pending",
                     *           "summary": "Approve return r-123: item arrived unused, within 30 days.",
                     *           "proposedBy": {
                     *             "tokenId": "tok_01JDZ8V7M2Q4",
                     *             "tokenName": "returns-agent"
                     *           },
                     *           "createdAt": "2026-11-29T10:00:00.000Z",
                     *           "expiresAt": "2026-11-30T10:00:00.000Z",
                     *           "decidedAt": null,
                     *           "decidedBy": null,
                     *           "reason": null,
                     *           "result": null
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: date-time */
                            createdAt: string;
                            decidedAt: string | null;
                            decidedBy: {
                                tokenId: string;
                                tokenName: string;
                            } | null;
                            /** Format: date-time */
                            expiresAt: string;
                            id: string;
                            proposedBy: {
                                tokenId: string;
                                tokenName: string;
                            };
                            reason: string | null;
                            /** @description Approved: the commit response; conflicted: the problem; otherwise null. */
                            result: (components["schemas"]["CommitResponse"] | components["schemas"]["Problem"]) | null;
                            /** @enum {string} */
                            status: "pending" | "approved" | "rejected" | "conflicted" | "expired";
                            summary: string;
                        }[];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postProposals: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1-255 characters; a retry with the same body gets the same proposal. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "summary": "Approve return r-123: item arrived unused, within 30 days.",
                 *       "commit": {
                 *         "records": [
                 *           {
                 *             "collection": "returns",
                 *             "id": "r-123",
                 *             "expectedVersion": 3,
                 *             "data": {
                 *               "status": "approved"
                 *             }
                 *           }
                 *         ],
                 *         "events": [
                 *           {
                 *             "type": "return.approved",
                 *             "payload": {
                 *               "returnId": "r-123",
                 *               "amount": 1999
                 *             }
                 *           }
                 *         ]
                 *       },
                 *       "expiresIn": "24h"
                 *     }
                 */
                "application/json": components["schemas"]["ProposalCreateRequest"];
            };
        };
        responses: {
            /** @description The pending proposal. */
            201: {
                headers: {
                    /** @description `true` on a retry answered from the first request. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "prp_01JDZ8V7M2Q4",
                     *       "status": "pending",
                     *       "summary": "Approve return r-123: item arrived unused, within 30 days.",
                     *       "commit": {
                     *         "records": [
                     *           {
                     *             "collection": "returns",
                     *             "id": "r-123",
                     *             "expectedVersion": 3,
                     *             "data": {
                     *               "status": "approved"
                     *             }
                     *           }
                     *         ],
                     *         "events": [
                     *           {
                     *             "type": "return.approved",
                     *             "payload": {
                     *               "returnId": "r-123",
                     *               "amount": 1999
                     *             }
                     *           }
                     *         ]
                     *       },
                     *       "proposedBy": {
                     *         "tokenId": "tok_01JDZ8V7M2Q4",
                     *         "tokenName": "returns-agent"
                     *       },
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "expiresAt": "2026-11-30T10:00:00.000Z",
                     *       "decidedAt": null,
                     *       "decidedBy": null,
                     *       "reason": null,
                     *       "result": null
                     *     }
                     */
                    "application/json": components["schemas"]["Proposal"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getProposalsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The proposal. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "prp_01JDZ8V7M2Q4",
                     *       "status": "pending",
                     *       "summary": "Approve return r-123: item arrived unused, within 30 days.",
                     *       "commit": {
                     *         "records": [
                     *           {
                     *             "collection": "returns",
                     *             "id": "r-123",
                     *             "expectedVersion": 3,
                     *             "data": {
                     *               "status": "approved"
                     *             }
                     *           }
                     *         ],
                     *         "events": [
                     *           {
                     *             "type": "return.approved",
                     *             "payload": {
                     *               "returnId": "r-123",
                     *               "amount": 1999
                     *             }
                     *           }
                     *         ]
                     *       },
                     *       "proposedBy": {
                     *         "tokenId": "tok_01JDZ8V7M2Q4",
                     *         "tokenName": "returns-agent"
                     *       },
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "expiresAt": "2026-11-30T10:00:00.000Z",
                     *       "decidedAt": null,
                     *       "decidedBy": null,
                     *       "reason": null,
                     *       "result": null,
                     *       "current": [
                     *         {
                     *           "collection": "returns",
                     *           "id": "r-123",
                     *           "version": 3,
                     *           "data": {
                     *             "status": "requested"
                     *           },
                     *           "deleted": false
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        commit: components["schemas"]["CommitRequest"];
                        /** Format: date-time */
                        createdAt: string;
                        /** @description Each record of the commit as it is now (`version: 0`, `data: null` if it never existed). */
                        current: {
                            collection: string;
                            data: {
                                [key: string]: unknown;
                            } | null;
                            deleted: boolean;
                            id: string;
                            version: number;
                        }[];
                        decidedAt: string | null;
                        decidedBy: {
                            tokenId: string;
                            tokenName: string;
                        } | null;
                        /** Format: date-time */
                        expiresAt: string;
                        id: string;
                        proposedBy: {
                            tokenId: string;
                            tokenName: string;
                        };
                        reason: string | null;
                        /** @description Approved: the commit response; conflicted: the problem; otherwise null. */
                        result: (components["schemas"]["CommitResponse"] | components["schemas"]["Problem"]) | null;
                        /** @enum {string} */
                        status: "pending" | "approved" | "rejected" | "conflicted" | "expired";
                        summary: string;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postProposalsIdApprove: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "reason": "photos checked"
                 *     }
                 */
                "application/json": components["schemas"]["ProposalDecisionRequest"];
            };
        };
        responses: {
            /** @description Approved, with the commit response in `result`. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "prp_01JDZ8V7M2Q4",
                     *       "status": "approved",
                     *       "summary": "Approve return r-123: item arrived unused, within 30 days.",
                     *       "commit": {
                     *         "records": [
                     *           {
                     *             "collection": "returns",
                     *             "id": "r-123",
                     *             "expectedVersion": 3,
                     *             "data": {
                     *               "status": "approved"
                     *             }
                     *           }
                     *         ],
                     *         "events": [
                     *           {
                     *             "type": "return.approved",
                     *             "payload": {
                     *               "returnId": "r-123",
                     *               "amount": 1999
                     *             }
                     *           }
                     *         ]
                     *       },
                     *       "proposedBy": {
                     *         "tokenId": "tok_01JDZ8V7M2Q4",
                     *         "tokenName": "returns-agent"
                     *       },
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "expiresAt": "2026-11-30T10:00:00.000Z",
                     *       "decidedAt": "2026-11-29T10:00:00.000Z",
                     *       "decidedBy": {
                     *         "tokenId": "tok_01JDZ8W1A9B2",
                     *         "tokenName": "alice"
                     *       },
                     *       "reason": "photos checked",
                     *       "result": {
                     *         "commitId": "cmt_01JDZ8V7M2Q4",
                     *         "records": [
                     *           {
                     *             "collection": "returns",
                     *             "id": "r-123",
                     *             "version": 4,
                     *             "deleted": false
                     *           }
                     *         ],
                     *         "events": [
                     *           {
                     *             "id": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *             "type": "return.approved",
                     *             "aggregate": "returns/r-123",
                     *             "sequence": 7,
                     *             "deliverBy": "2026-11-29T10:00:00.000Z",
                     *             "deliveries": [
                     *               {
                     *                 "id": "dlv_01JDZ8V7M2Q4",
                     *                 "endpointId": "ep_01JDZ8V7M2Q4"
                     *               }
                     *             ]
                     *           }
                     *         ]
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["Proposal"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postProposalsIdReject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                /**
                 * @example {
                 *       "reason": "outside the return window"
                 *     }
                 */
                "application/json": components["schemas"]["ProposalDecisionRequest"];
            };
        };
        responses: {
            /** @description Rejected. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "prp_01JDZ8V7M2Q4",
                     *       "status": "rejected",
                     *       "summary": "Approve return r-123: item arrived unused, within 30 days.",
                     *       "commit": {
                     *         "records": [
                     *           {
                     *             "collection": "returns",
                     *             "id": "r-123",
                     *             "expectedVersion": 3,
                     *             "data": {
                     *               "status": "approved"
                     *             }
                     *           }
                     *         ],
                     *         "events": [
                     *           {
                     *             "type": "return.approved",
                     *             "payload": {
                     *               "returnId": "r-123",
                     *               "amount": 1999
                     *             }
                     *           }
                     *         ]
                     *       },
                     *       "proposedBy": {
                     *         "tokenId": "tok_01JDZ8V7M2Q4",
                     *         "tokenName": "returns-agent"
                     *       },
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "expiresAt": "2026-11-30T10:00:00.000Z",
                     *       "decidedAt": "2026-11-29T10:00:00.000Z",
                     *       "decidedBy": {
                     *         "tokenId": "tok_01JDZ8W1A9B2",
                     *         "tokenName": "alice"
                     *       },
                     *       "reason": "outside the return window",
                     *       "result": null
                     *     }
                     */
                    "application/json": components["schemas"]["Proposal"];
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getRecordsCollection: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
            };
            header?: never;
            path: {
                collection: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of records. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "collection": "returns",
                     *           "id": "r-123",
                     *           "version": 4,
                     *           "data": {
                     *             "status": "approved"
                     *           },
                     *           "createdAt": "2026-11-29T10:00:00.000Z",
                     *           "updatedAt": "2026-11-29T10:00:00.000Z"
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Record"][];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getRecordsCollectionId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                collection: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The record; `ETag` is its version. */
            200: {
                headers: {
                    /** @description The record's version in quotes. */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "collection": "returns",
                     *       "id": "r-123",
                     *       "version": 4,
                     *       "data": {
                     *         "status": "approved"
                     *       },
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "updatedAt": "2026-11-29T10:00:00.000Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Record"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    putRecordsCollectionId: {
        parameters: {
            query?: never;
            header?: {
                /** @description Up to 255 characters, scoped to the token. */
                "Idempotency-Key"?: string;
                /** @description The current version in quotes, e.g. "3". */
                "If-Match"?: string;
                /** @description `*`: the record must never have existed. */
                "If-None-Match"?: string;
            };
            path: {
                collection: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "data": {
                 *         "status": "approved"
                 *       },
                 *       "events": [
                 *         {
                 *           "type": "return.approved",
                 *           "payload": {}
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["PutRecordRequest"];
            };
        };
        responses: {
            /** @description Updated; `ETag` is the new version. */
            200: {
                headers: {
                    /** @description The record's version in quotes, e.g. "4". */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "collection": "returns",
                     *       "id": "r-123",
                     *       "version": 4,
                     *       "data": {
                     *         "status": "approved"
                     *       },
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "updatedAt": "2026-11-29T10:00:00.000Z",
                     *       "commitId": "cmt_01JDZ8V7M2Q4",
                     *       "events": [
                     *         {
                     *           "id": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *           "type": "return.approved",
                     *           "aggregate": "returns/r-123",
                     *           "sequence": 7,
                     *           "deliverBy": "2026-11-29T10:00:00.000Z",
                     *           "deliveries": [
                     *             {
                     *               "id": "dlv_01JDZ8V7M2Q4",
                     *               "endpointId": "ep_01JDZ8V7M2Q4"
                     *             }
                     *           ]
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        collection: string;
                        commitId: string;
                        /** Format: date-time */
                        createdAt: string;
                        data: {
                            [key: string]: unknown;
                        };
                        events: components["schemas"]["CommittedEvent"][];
                        id: string;
                        /** Format: date-time */
                        updatedAt: string;
                        version: number;
                    };
                };
            };
            /** @description Created; `ETag` is the new version. */
            201: {
                headers: {
                    /** @description The record's version in quotes, e.g. "1". */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "collection": "returns",
                     *       "id": "r-123",
                     *       "version": 1,
                     *       "data": {
                     *         "status": "approved"
                     *       },
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "updatedAt": "2026-11-29T10:00:00.000Z",
                     *       "commitId": "cmt_01JDZ8V7M2Q4",
                     *       "events": []
                     *     }
                     */
                    "application/json": {
                        collection: string;
                        commitId: string;
                        /** Format: date-time */
                        createdAt: string;
                        data: {
                            [key: string]: unknown;
                        };
                        events: components["schemas"]["CommittedEvent"][];
                        id: string;
                        /** Format: date-time */
                        updatedAt: string;
                        version: number;
                    };
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            412: components["responses"]["PreconditionFailed"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getRecordsCollectionIdHistory: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
            };
            header?: never;
            path: {
                collection: string;
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of versions. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "version": 2,
                     *           "data": {
                     *             "status": "approved"
                     *           },
                     *           "deleted": false,
                     *           "erased": false,
                     *           "commitId": "cmt_01JDZ8V7M2Q4",
                     *           "committedBy": {
                     *             "tokenId": "tok_01JDZ8A1",
                     *             "tokenName": "returns-service"
                     *           },
                     *           "proposalId": null,
                     *           "at": "2026-11-29T10:00:00.000Z",
                     *           "events": [
                     *             {
                     *               "id": "0b7e4a0c-6a8e-4d9b-9c1e-5f0e1d2c3b4a",
                     *               "type": "return.approved",
                     *               "aggregate": "returns/r-123",
                     *               "sequence": 2
                     *             }
                     *           ]
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: {
                            /** Format: date-time */
                            at: string;
                            /** @description null for versions from before the ledger. */
                            commitId: string | null;
                            committedBy: {
                                tokenId: string;
                                tokenName: string | null;
                            } | null;
                            /** @description null for a delete or an erased version. */
                            data: {
                                [key: string]: unknown;
                            } | null;
                            deleted: boolean;
                            /** @description outboxd extension: the data was erased (docs/ledger.md). */
                            erased: boolean;
                            events: {
                                aggregate: string;
                                id: string;
                                sequence: number;
                                type: string;
                            }[];
                            /** @description outboxd extension: the proposal applied. */
                            proposalId: string | null;
                            version: number;
                        }[];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getStats: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Totals and the same per endpoint. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "pending": 3,
                     *       "inFlight": 1,
                     *       "due": 1,
                     *       "oldestPendingAgeSeconds": 12.5,
                     *       "dead": 1,
                     *       "deadlineExceededTotal": 1,
                     *       "deliveredLastHour": 420,
                     *       "endpoints": [
                     *         {
                     *           "id": "ep_01JDZ8V7M2Q4",
                     *           "kind": "webhook",
                     *           "pending": 3,
                     *           "inFlight": 1,
                     *           "due": 1,
                     *           "oldestPendingAgeSeconds": 12.5,
                     *           "dead": 1,
                     *           "deadlineExceededTotal": 1,
                     *           "deliveredLastHour": 420
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        dead: number;
                        deadlineExceededTotal: number;
                        deliveredLastHour: number;
                        due: number;
                        endpoints: {
                            dead: number;
                            deadlineExceededTotal: number;
                            deliveredLastHour: number;
                            due: number;
                            id: string;
                            inFlight: number;
                            /** @description outboxd extension: the endpoint's kind; null once it was deleted. */
                            kind: ("webhook" | "pull") | null;
                            oldestPendingAgeSeconds: number;
                            pending: number;
                        }[];
                        inFlight: number;
                        oldestPendingAgeSeconds: number;
                        pending: number;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getStatsHistory: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Per-minute buckets. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "from": "2026-11-29T09:01:00.000Z",
                     *       "to": "2026-11-29T10:01:00.000Z",
                     *       "bucketSeconds": 60,
                     *       "buckets": [
                     *         {
                     *           "start": "2026-11-29T10:00:00.000Z",
                     *           "delivered": 7,
                     *           "latencyP50Ms": 12,
                     *           "latencyMaxMs": 340
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        buckets: {
                            delivered: number;
                            latencyMaxMs: number | null;
                            latencyP50Ms: number | null;
                            /** Format: date-time */
                            start: string;
                        }[];
                        bucketSeconds: number;
                        /** Format: date-time */
                        from: string;
                        /** Format: date-time */
                        to: string;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getTokens: {
        parameters: {
            query?: {
                /** @description The `next` cursor of the previous page. */
                after?: string;
                /** @description Page size, 1-500 (default 100). */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of tokens. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "data": [
                     *         {
                     *           "id": "tok_01JDZ8V7M2Q4",
                     *           "name": "returns-service",
                     *           "scopes": [
                     *             "commit"
                     *           ],
                     *           "createdAt": "2026-11-29T10:00:00.000Z",
                     *           "lastUsedAt": "2026-11-29T10:00:00.000Z",
                     *           "revokedAt": null
                     *         }
                     *       ],
                     *       "next": null
                     *     }
                     */
                    "application/json": {
                        data: components["schemas"]["Token"][];
                        next: string | null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    postTokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "returns-service",
                 *       "scopes": [
                 *         "commit"
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["TokenCreateRequest"];
            };
        };
        responses: {
            /** @description Created. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "tok_01JDZ8V7M2Q4",
                     *       "name": "returns-service",
                     *       "scopes": [
                     *         "commit"
                     *       ],
                     *       "createdAt": "2026-11-29T10:00:00.000Z",
                     *       "token": "otk_…"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        createdAt: string;
                        id: string;
                        name: string;
                        scopes: ("read" | "commit" | "propose" | "approve" | "consume" | "admin")[];
                        token: string;
                    };
                };
            };
            400: components["responses"]["MalformedJson"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["BodyTooLarge"];
            422: components["responses"]["Invalid"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    deleteTokensId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "tok_01JDZ8V7M2Q4",
                     *       "revoked": true
                     *     }
                     */
                    "application/json": {
                        id: string;
                        /** @constant */
                        revoked: true;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    getWhoami: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The token (never its secret). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "tok_01JDZ8V7M2Q4",
                     *       "name": "returns-agent",
                     *       "scopes": [
                     *         "propose",
                     *         "read"
                     *       ]
                     *     }
                     */
                    "application/json": {
                        id: string;
                        name: string;
                        scopes: ("read" | "commit" | "propose" | "approve" | "consume" | "admin")[];
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            503: components["responses"]["Unavailable"];
        };
    };
    "webhook:outboxd.endpoint.disabled": {
        parameters: {
            query?: never;
            header: {
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-id": string;
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-signature": string;
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-timestamp": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    aggregate: string;
                    data: {
                        description: string | null;
                        endpointId: string;
                        /** Format: date-time */
                        failingSince: string | null;
                        lastError: string | null;
                        /** @enum {unknown} */
                        reason: "operator" | "gone" | "failing";
                    };
                    /**
                     * Format: uuid
                     * @description The event id (webhook-id).
                     */
                    id: string;
                    /** @description The same aggregate's latest earlier sequence with a delivery to this endpoint, else null: a gap up to it was never meant for this endpoint. */
                    previousSequence: number | null;
                    sequence: number;
                    /** Format: date-time */
                    timestamp: string;
                    /** @constant */
                    type: "outboxd.endpoint.disabled";
                };
            };
        };
        responses: {
            /** @description Delivered. Answer 2xx also for a duplicate or stale event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook:outboxd.endpoint.enabled": {
        parameters: {
            query?: never;
            header: {
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-id": string;
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-signature": string;
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-timestamp": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    aggregate: string;
                    data: {
                        description: string | null;
                        enabledBy: {
                            tokenId: string;
                            tokenName: string;
                        } | null;
                        endpointId: string;
                    };
                    /**
                     * Format: uuid
                     * @description The event id (webhook-id).
                     */
                    id: string;
                    /** @description The same aggregate's latest earlier sequence with a delivery to this endpoint, else null: a gap up to it was never meant for this endpoint. */
                    previousSequence: number | null;
                    sequence: number;
                    /** Format: date-time */
                    timestamp: string;
                    /** @constant */
                    type: "outboxd.endpoint.enabled";
                };
            };
        };
        responses: {
            /** @description Delivered. Answer 2xx also for a duplicate or stale event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "webhook:outboxd.ping": {
        parameters: {
            query?: never;
            header: {
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-id": string;
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-signature": string;
                /** @description Standard Webhooks header; verify the signature over the raw body before parsing it. */
                "webhook-timestamp": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    aggregate: string;
                    data: {
                        endpointId: string;
                    };
                    /**
                     * Format: uuid
                     * @description The event id (webhook-id).
                     */
                    id: string;
                    /** @description The same aggregate's latest earlier sequence with a delivery to this endpoint, else null: a gap up to it was never meant for this endpoint. */
                    previousSequence: number | null;
                    sequence: number;
                    /** Format: date-time */
                    timestamp: string;
                    /** @constant */
                    type: "outboxd.ping";
                };
            };
        };
        responses: {
            /** @description Delivered. Answer 2xx also for a duplicate or stale event. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
