// The event-type catalog's named writes (db/writer-ops.ts).
import { defineWrite } from "../db/writer-ops.ts";
import { deleteEventType, putEventType } from "./store.ts";

export const putEventTypeWrite = defineWrite("eventTypes.put", putEventType, { again: false });
export const deleteEventTypeWrite = defineWrite("eventTypes.delete", deleteEventType, { again: false });
