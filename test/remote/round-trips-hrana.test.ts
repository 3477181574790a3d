// The remote write path's round trips through @libsql/client's HTTP client and the simulated
// libSQL server (test/helpers/sim-server.ts, Hrana over HTTP): the errors of a refused guard, a
// wrong row count or a failed BEGIN are what a real server answers (round-trips-suite.ts).
import { roundTripTests } from "./round-trips-suite.ts";

roundTripTests("hrana");
