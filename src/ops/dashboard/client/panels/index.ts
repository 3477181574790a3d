// The dashboard's panels, in the order they render. To add one: write panels/<name>.ts exporting
// a PanelFactory (see ../panel.ts), add its markup to ../../page.ts, and list it here.
import type { PanelFactory } from "../panel.ts";
import { attemptsPanel } from "./attempts.ts";
import { chartPanel } from "./chart.ts";
import { deadLettersPanel } from "./dead-letters.ts";
import { endpointsPanel } from "./endpoints.ts";
import { proposalsPanel } from "./proposals.ts";
import { recordPanel } from "./record.ts";
import { statsPanel } from "./stats.ts";

export const PANELS: PanelFactory[] = [
  recordPanel,
  statsPanel,
  chartPanel,
  proposalsPanel,
  deadLettersPanel,
  endpointsPanel,
  attemptsPanel,
];
