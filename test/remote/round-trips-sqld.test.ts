// The remote write path's round trips through @libsql/client's HTTP client and a real libSQL
// server (sqld on 127.0.0.1): the errors of a refused guard, a wrong row count or a failed BEGIN
// are the server's own (round-trips-suite.ts).
import { roundTripTests } from "./round-trips-suite.ts";

roundTripTests("sqld");
