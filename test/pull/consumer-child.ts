// A consumer process for the crash test: polls one batch, acks the first half, reports on stdout
export {};

// what it leased and acked, then keeps the rest leased until it is killed.
const [url, token, endpointId] = process.argv.slice(2) as [string, string, string];
const call = async (path: string, body: unknown) => {
  const response = await fetch(`${url}/v1/endpoints/${endpointId}/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
};
const { data } = (await call("poll", { max: 10, lease: "60s" })) as {
  data: { deliveryId: string; leaseToken: string }[];
};
const half = data.slice(0, Math.floor(data.length / 2));
await call("ack", { acks: half.map(({ deliveryId, leaseToken }) => ({ deliveryId, leaseToken })) });
console.log(JSON.stringify({ leased: data.map((d) => d.deliveryId), acked: half.map((d) => d.deliveryId) }));
// Mid-batch: the other half stays leased until the process dies.
setInterval(() => {}, 60_000);
