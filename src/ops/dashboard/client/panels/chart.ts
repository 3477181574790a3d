// The last hour as an SVG chart: deliveries per minute as bars, latency p50 and max as lines.
import type { Panel, PanelFactory } from "../panel.ts";
import type { Bucket } from "../types.ts";

export const chartPanel: PanelFactory = ({ dom: { byId, s }, format: { ms } }): Panel => {
  const W = 960;
  const H = 220;
  const left = 44;
  const right = 60;
  const top = 14;
  const bottom = 26;
  const plotW = W - left - right;
  const plotH = H - top - bottom;

  function render(buckets: Bucket[]): void {
    const n = Math.max(buckets.length, 1);
    const step = plotW / n;
    const maxCount = Math.max(1, ...buckets.map((b) => b.delivered));
    const maxLatency = Math.max(1, ...buckets.map((b) => b.latencyMaxMs ?? 0));
    const yCount = (v: number) => top + plotH - (v / maxCount) * plotH;
    const yLatency = (v: number) => top + plotH - (v / maxLatency) * plotH;
    const svg = s("svg", {
      viewBox: `0 0 ${W} ${H}`,
      role: "img",
      "aria-label": "Deliveries per minute and their latency over the last hour",
    });
    for (let i = 0; i <= 4; i++) {
      const y = top + (plotH * i) / 4;
      svg.append(s("line", { x1: left, x2: W - right, y1: y, y2: y, stroke: "#e6e9ef" }));
    }
    svg.append(
      s("text", { x: left - 6, y: top + 4, "text-anchor": "end", class: "axis" }, String(maxCount)),
      s("text", { x: left - 6, y: top + plotH, "text-anchor": "end", class: "axis" }, "0"),
      s("text", { x: W - right + 6, y: top + 4, class: "axis" }, ms(maxLatency)),
      s("text", { x: W - right + 6, y: top + plotH, class: "axis" }, "0"),
    );
    buckets.forEach((b, i) => {
      const x = left + i * step;
      const y = yCount(b.delivered);
      const label = `${new Date(b.start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}: ${
        b.delivered
      } delivered, latency p50 ${ms(b.latencyP50Ms)}, max ${ms(b.latencyMaxMs)}`;
      svg.append(
        s(
          "rect",
          {
            x: x + 1,
            y,
            width: Math.max(1, step - 2),
            height: top + plotH - y,
            fill: "#9db4ef",
            class: "bar",
          },
          s("title", {}, label),
        ),
      );
    });
    const line = (pick: (b: Bucket) => number | null, color: string, dash: string, dot: number) => {
      let d = "";
      let penDown = false;
      buckets.forEach((b, i) => {
        const v = pick(b);
        if (v === null) {
          penDown = false;
          return;
        }
        const x = left + i * step + step / 2;
        d += `${penDown ? "L" : "M"}${x.toFixed(1)},${yLatency(v).toFixed(1)} `;
        penDown = true;
        svg.append(s("circle", { cx: x.toFixed(1), cy: yLatency(v).toFixed(1), r: dot, fill: color }));
      });
      if (d)
        svg.append(
          s("path", { d, fill: "none", stroke: color, "stroke-width": 2, "stroke-dasharray": dash }),
        );
    };
    line((b) => b.latencyMaxMs, "#e8a06d", "4 3", 2);
    line((b) => b.latencyP50Ms, "#c2410c", "", 2.5);
    for (const minutesAgo of [60, 45, 30, 15, 0]) {
      const x = left + plotW * (1 - minutesAgo / 60);
      svg.append(
        s(
          "text",
          {
            x,
            y: H - 6,
            "text-anchor": minutesAgo === 60 ? "start" : minutesAgo === 0 ? "end" : "middle",
            class: "axis",
          },
          minutesAgo === 0 ? "now" : `−${minutesAgo} min`,
        ),
      );
    }
    const total = buckets.reduce((sum, b) => sum + b.delivered, 0);
    byId("chart-total").textContent = `${total} delivered in the last hour`;
    byId("chart").replaceChildren(svg);
  }

  return {
    async load(get) {
      const history = await get<{ buckets: Bucket[] }>("/v1/stats/history");
      return () => render(history.buckets);
    },
  };
};
