// Builds the Docker image and checks that it serves /readyz. Needs a Docker engine, which the
// development and CI machines of this project do not have; run it by hand where one exists:
//   bun scripts/docker-smoke.ts
import { join } from "node:path";

const repo = join(import.meta.dir, "..");
const tag = `outboxd-smoke:${Date.now()}`;
if (!Bun.which("docker")) {
  console.error("docker is not on PATH");
  process.exit(2);
}
const built = Bun.spawnSync(["docker", "build", "-t", tag, repo], { stdout: "inherit", stderr: "inherit" });
if (built.exitCode !== 0) process.exit(1);
const id = Bun.spawnSync(["docker", "run", "-d", "--rm", "-p", "127.0.0.1::8080", tag])
  .stdout.toString()
  .trim();
let ok = false;
try {
  const port = Bun.spawnSync(["docker", "port", id, "8080"]).stdout.toString().trim().split(":").at(-1);
  const deadline = Date.now() + 60_000;
  while (!ok && Date.now() < deadline) {
    ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (!ok) await Bun.sleep(250);
  }
} finally {
  Bun.spawnSync(["docker", "rm", "-f", id]);
  Bun.spawnSync(["docker", "rmi", tag]);
}
console.log(ok ? "image serves /readyz" : "image did not become ready within 60 s");
process.exit(ok ? 0 : 1);
