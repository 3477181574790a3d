// An endpoint's signing secrets, opened once per stored text rather than at every send: opening
// parses (and, with OUTBOXD_MASTER_KEY, decrypts) the stored list, and a backlog sends thousands
// per second to the same few endpoints. Keyed by the stored text itself, so a rotation (a new
// text) is opened anew; which of the secrets still sign is decided at each send.
import type { SecretBox, StoredSecret } from "../endpoints/secrets.ts";

/** More distinct stored texts than this, and the cache starts over (endpoints are few). */
const MAX_ENTRIES = 1024;

export class OpenedSecrets {
  readonly #box: SecretBox;
  readonly #opened = new Map<string, StoredSecret[]>();

  constructor(box: SecretBox) {
    this.#box = box;
  }

  /** The stored list, opened; throws as SecretBox.open does (never cached then). */
  open(stored: string): StoredSecret[] {
    let secrets = this.#opened.get(stored);
    if (secrets === undefined) {
      secrets = this.#box.open(stored);
      if (this.#opened.size >= MAX_ENTRIES) this.#opened.clear();
      this.#opened.set(stored, secrets);
    }
    return secrets;
  }
}
