// The delivery module's named writes (db/writer-ops.ts) that callers outside it queue directly
// (the chunked ones are beside their loops: retention.ts, expire.ts, replay.ts).
import { defineWrite } from "../db/writer-ops.ts";
import { cancelDelivery } from "./cancel.ts";
import { deadLetterOrphans } from "./dead-letter.ts";
import { expandFanOuts } from "./enqueue.ts";
import { replayDelivery } from "./replay.ts";

export const replayDeliveryWrite = defineWrite("deliveries.replay", replayDelivery, { again: false });
export const cancelDeliveryWrite = defineWrite("deliveries.cancel", cancelDelivery, { again: false });
export const deadLetterOrphansWrite = defineWrite("deliveries.deadLetterOrphans", deadLetterOrphans, {
  again: false,
});
export const expandFanOutsWrite = defineWrite("deliveries.expandFanOuts", expandFanOuts, { again: false });
