// The direction of dependencies in src/ (issue 11), checked by `npm run check` and .ci/run:
//
//   edges      main.ts, app.ts, deno.ts, cli/, http/, mcp/   (composition roots and interfaces)
//      ↓
//   domain     commit/, endpoints/, deliveries/, dispatch/, ops/, auth/, ledger/, event-types/,
//              proposals/, pull/, config.ts, failpoints.ts
//      ↓
//   base       db/, lib/            (use nothing of the house but each other: db may use lib)
//
//   receiver/  the snippet receivers copy into their own code: imports nothing at all.
//
// A wrong import fails with the rule's name (test/architecture/dependencies.test.ts proves it).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "domain-uses-no-edge",
      comment:
        "Domain modules are used by the HTTP API, the CLI and MCP, never the other way round: " +
        "what the write side needs (request schemas, rules) lives in the domain.",
      severity: "error",
      from: {
        path: "^src/(commit|endpoints|deliveries|dispatch|ops|auth|ledger|event-types|proposals|pull)/|^src/(config|failpoints)\\.ts$",
      },
      to: { path: "^src/(http|cli|mcp)/|^src/(main|app|deno)\\.ts$" },
    },
    {
      name: "base-uses-no-domain",
      comment:
        "db/ and lib/ are the base: they use nothing of the house (db may use lib). The writer " +
        "thread's entry point is a composition root (it loads every named write), like main.ts.",
      severity: "error",
      from: { path: "^src/(db|lib)/", pathNot: "^src/db/writer-worker-main\\.ts$" },
      to: { path: "^src/", pathNot: "^src/(db|lib)/" },
    },
    {
      name: "lib-uses-nothing",
      comment: "lib/ is plain helpers: not even the database.",
      severity: "error",
      from: { path: "^src/lib/" },
      to: { path: "^src/", pathNot: "^src/lib/" },
    },
    {
      name: "receiver-imports-nothing",
      comment: "src/receiver is copied into receivers' code: it may import nothing (not even npm packages).",
      severity: "error",
      from: { path: "^src/receiver/" },
      to: { pathNot: "^src/receiver/", dependencyTypesNot: ["core"] },
    },
    {
      name: "domain-uses-no-ops-views",
      comment:
        "ops/ reads the state of the outbox for people (stats, metrics, history, dashboard); the " +
        "domain may use its cross-cutting log and tracing only.",
      severity: "error",
      from: { path: "^src/(commit|endpoints|deliveries|dispatch|auth|ledger|event-types|proposals|pull)/" },
      to: { path: "^src/ops/", pathNot: "^src/ops/(log|tracing)\\.ts$" },
    },
    {
      name: "deliveries-owns-its-table",
      comment:
        "src/deliveries owns the deliveries table and is used by the write side and the dispatcher; " +
        "it depends on no other domain module (else the state machine would be spread again).",
      severity: "error",
      from: { path: "^src/deliveries/" },
      to: { path: "^src/", pathNot: "^src/(deliveries|db|lib)/" },
    },
    {
      name: "no-circular",
      comment:
        "Modules that import each other cannot be read (or tested) one at a time. A lazy " +
        "import() back (ops/tracing loading its SDK only when tracing is on) is not a cycle at load time.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["dynamic-import"] } },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    parser: "swc",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "\\.gen\\.ts$" },
  },
};
