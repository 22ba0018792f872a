// Preloaded (`node --import ./fixed-clock.mjs`) into the `a2a-db upgrade` run: its migration ledger
// records when each migration ran (`new Date()`), the one value in the SQLite task store the
// generator cannot otherwise fix. With the clock fixed, re-runs write byte-identical files.
const FIXED = Date.parse('2026-06-15T07:59:00.000Z');
const SystemDate = Date;
globalThis.Date = class extends SystemDate {
  constructor(...args) {
    super(...(args.length ? args : [FIXED]));
  }

  static now() {
    return FIXED;
  }
};
