import { defineConfig } from "drizzle-kit";

// `npm run db:generate` turns changes to the schema into a new versioned migration,
// then embeds every migration into src/db/migrations.gen.ts so the executable carries them.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./migrations",
});
