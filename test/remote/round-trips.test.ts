// The remote write path's round trips, on a local file through @libsql/client (round-trips-suite.ts).
import { roundTripTests } from "./round-trips-suite.ts";

roundTripTests("file");
