// Rows of @a2a-js/sdk 1.3.0's task store, written by its own DatabaseTaskStore.save on a Kysely whose
// driver records each statement instead of sending it (kysely's DummyDriver, as `a2a-db --sql` does).
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from "kysely";
import { Task } from "@a2a-js/sdk";
import { DatabaseTaskStore } from "@a2a-js/sdk/server/database";
import { ServerCallContext } from "@a2a-js/sdk/server";

const recorded = [];
const db = new Kysely({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (instance) => new PostgresIntrospector(instance),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
  log: (event) => { if (event.level === "query") recorded.push(event.query); },
});
const store = new DatabaseTaskStore(db, { tableName: "acme_tasks" });
const citation = {
  study: "Northwind Retail Pulse", period: "Q1 2026", fielded: "2026-01-05/2026-03-28",
  base: { name: "Shoppers, last 4 weeks", n: 1830 }, weight: "retail_weight",
  source: { table: "pulse_flat", column: "basket_eur", function: "meanBasket" }, warnings: [],
};
const task = (id, state, share, timestamp) => Task.fromJSON({
  id, contextId: "ctx-js", status: { state, timestamp },
  artifacts: [{ artifactId: "answer", name: "answer", parts: [
    { data: { share, n: 912 } },
    { data: citation, mediaType: "application/vnd.upperhand.citations+json" },
  ] }],
});
const context = new ServerCallContext([], { isAuthenticated: true, userName: "analyst" });
const save = async (t) => { await store.save(t, context); };
const phases = {
  first: [task("task-js-1", "TASK_STATE_COMPLETED", 0.31, "2026-04-21T09:00:00Z"),
          task("task-js-2", "TASK_STATE_WORKING", 0.12, "2026-04-21T09:05:00Z")],
  second: [task("task-js-2", "TASK_STATE_COMPLETED", 0.14, "2026-04-21T09:30:00Z"),
           task("task-js-3", "TASK_STATE_COMPLETED", 0.27, "2026-04-21T09:40:00Z")],
};
const out = {};
for (const [phase, tasks] of Object.entries(phases)) {
  recorded.length = 0;
  for (const t of tasks) await save(t);
  out[phase] = recorded.map((q) => {
    const columns = q.sql.match(/insert into "acme_tasks" \(([^)]*)\)/)[1].split(", ").map((c) => c.replaceAll('"', ""));
    return Object.fromEntries(columns.map((c, i) => [c, q.parameters[i]]));
  });
}
console.log(JSON.stringify(out, null, 1));
