export function pullClient(api, options) {
    const id = (endpoint) => ({ params: { path: { id: endpoint } } });
    const answer = async (call) => {
        const { data, error, response } = await call;
        if (!response.ok)
            throw options.problem(response.status, error);
        return data;
    };
    const list = (leases) => []
        .concat(leases)
        .map(({ deliveryId, leaseToken }) => ({ deliveryId, leaseToken }));
    return {
        poll(endpoint, { signal, ...body } = {}) {
            return answer(api.POST("/v1/endpoints/{id}/poll", { ...id(endpoint), body, ...(signal ? { signal } : {}) }));
        },
        ack(endpoint, leases) {
            return answer(api.POST("/v1/endpoints/{id}/ack", { ...id(endpoint), body: { acks: list(leases) } }));
        },
        nack(endpoint, leases, { retryAfter } = {}) {
            const nacks = list(leases).map((lease) => retryAfter === undefined ? lease : { ...lease, retryAfter });
            return answer(api.POST("/v1/endpoints/{id}/ack", { ...id(endpoint), body: { nacks } }));
        },
        async *stream(endpoint, { max, lease, signal } = {}) {
            const query = new URLSearchParams();
            if (max !== undefined)
                query.set("max", String(max));
            if (lease !== undefined)
                query.set("lease", lease);
            const url = `${options.baseUrl}/v1/endpoints/${encodeURIComponent(endpoint)}/stream${query.size ? `?${query}` : ""}`;
            const request = new Request(url, {
                headers: { authorization: `Bearer ${options.token}`, accept: "text/event-stream" },
                ...(signal ? { signal } : {}),
            });
            const response = await (options.fetch ?? fetch)(request);
            if (!response.ok || !response.body) {
                const text = await response.text().catch(() => "");
                let body = text;
                try {
                    body = JSON.parse(text);
                }
                catch {
                    // not JSON: its text is the detail
                }
                throw options.problem(response.status, body);
            }
            yield* deliveries(response.body, signal);
        },
    };
}
const BLANK_LINE = /\r\n\r\n|\n\n|\r\r/;
/** The `delivery` events of a Server-Sent Events body (comments and other events skipped). */
async function* deliveries(body, signal) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
        for (;;) {
            const { value, done } = await reader.read();
            if (done)
                return;
            buffer += decoder.decode(value, { stream: true });
            // An event ends at a blank line; a CRLF split across two chunks is only matched once whole.
            for (let end = BLANK_LINE.exec(buffer); end !== null; end = BLANK_LINE.exec(buffer)) {
                const block = buffer.slice(0, end.index);
                buffer = buffer.slice(end.index + end[0].length);
                let event = "message";
                const data = [];
                for (const line of block.split(/\r\n|\r|\n/)) {
                    if (line.startsWith("event:"))
                        event = line.slice(6).trim();
                    else if (line.startsWith("data:"))
                        data.push(line.slice(5).replace(/^ /, ""));
                }
                if (event === "delivery" && data.length > 0)
                    yield JSON.parse(data.join("\n"));
            }
        }
    }
    catch (error) {
        if (signal?.aborted)
            return;
        throw error;
    }
    finally {
        reader.releaseLock();
    }
}
