"""Sample transcripts made by the real a2a-sdk 0.3.26 (run in the 0.3.26 venv).

Server: A2AStarletteApplication (JSON-RPC) and A2ARESTFastAPIApplication
(HTTP+JSON) around DefaultRequestHandler and a scripted AgentExecutor.
Client: the SDK's ClientFactory clients (JSON-RPC and REST transports).
In-process over httpx.ASGITransport; request/response bytes are recorded and
written unchanged (gzip where the file name says so).

Also appends rows written by the 0.3.26 DatabaseTaskStore to the `tasks`
table of legacy-funnel/task-store.sqlite, which make_samples_13.py created
with the 1.3.0 store (run that first): the 0.3 store knows no
protocol_version column, so its rows get NULL there.
"""

from __future__ import annotations

import asyncio
import gzip
import random
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

_rng = random.Random(326)
uuid.uuid4 = lambda: uuid.UUID(int=_rng.getrandbits(128), version=4)

import httpx  # noqa: E402
from a2a.client import ClientConfig, ClientFactory  # noqa: E402
from a2a.server.agent_execution import AgentExecutor, RequestContext  # noqa: E402
from a2a.server.agent_execution.request_context_builder import (  # noqa: E402
    RequestContextBuilder,
)
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication  # noqa: E402
from a2a.server.id_generator import IDGenerator  # noqa: E402
from a2a.server.request_handlers import DefaultRequestHandler  # noqa: E402
from a2a.server.tasks import DatabaseTaskStore, InMemoryTaskStore, TaskUpdater  # noqa: E402
from a2a.types import (  # noqa: E402
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    DataPart,
    Message,
    Part,
    Role,
    Task,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TextPart,
)
from common import (  # noqa: E402  # noqa: E402
    CIT_MT,
    CIT_NORTHWIND,
    CIT_NORTHWIND_CHANNEL,
    CIT_NORTHWIND_LEGACY,
    CIT_NORTHWIND_ZERO,
    EXT_URI,
    OUT,
    Q_BASKET,
    Q_BASKET_LEGACY,
    Q_CHANNEL,
    Q_VISITS,
    TS,
    Fragment,
    cit_summary,
    citation,
    copy_entry,
)
from sqlalchemy.ext.asyncio import create_async_engine  # noqa: E402

SDK = "a2a-sdk 0.3.26"
FR = Fragment("sdk03")
L = "Legacy Funnel Agent"

CIT_FOOTFALL = citation(
    "Northwind Retail Pulse",
    "2026-Q1",
    "Store visitors, exit survey",
    1204,
    "nw_exit_survey",
    "footfall_idx",
    "extractIndex",
    weight="visit_weight",
)
Q_FOOTFALL = {"footfall_index": 103.4, "vs_prior_quarter": 0.021, "total": 1204}
CIT_LOYALTY = citation(
    "Northwind Retail Pulse",
    "2026-Q1",
    "Loyalty-card shoppers",
    612,
    "nw_pulse_long",
    "loyalty_tier",
    "extractShare",
    weight="unweighted",
)
Q_LOYALTY = {
    "tiers": [{"tier": "gold", "share": 0.12}, {"tier": "silver", "share": 0.33}, {"tier": "basic", "share": 0.55}],
    "total": 612,
}
CIT_SEASONAL = citation(
    "Northwind Retail Pulse",
    "2025-Q4",
    "Loyalty-card shoppers",
    587,
    "nw_pulse_long",
    "gift_spend",
    "extractMean",
    weight="unweighted",
)
Q_SEASONAL = {"mean_gift_spend_eur": 86.5, "share_buying_gifts": 0.64, "total": 587}


def text_part(s):
    return Part(root=TextPart(text=s))


def data_part(d, meta=None):
    return Part(root=DataPart(data=d, metadata=meta))


def cite_part(d, key="mediaType"):
    return data_part(d, {key: CIT_MT})


SCRIPTS: dict[str, dict] = {}


class NextTaskId(IDGenerator):
    value = None

    def generate(self, context):
        return NextTaskId.value


class SeqIds(IDGenerator):
    def __init__(self, prefix):
        self.prefix, self.n = prefix, 0

    def generate(self, context):
        self.n += 1
        return f"{self.prefix}-agent-msg-{self.n}"


class FixedIdBuilder(RequestContextBuilder):
    async def build(self, params=None, task_id=None, context_id=None, task=None, context=None):
        return RequestContext(
            request=params,
            task_id=task_id,
            context_id=context_id,
            task=task,
            call_context=context,
            task_id_generator=NextTaskId(),
        )


class ScriptedExecutor(AgentExecutor):
    async def execute(self, context, event_queue):
        sc = SCRIPTS[context.message.message_id]
        up = TaskUpdater(event_queue, context.task_id, context.context_id, message_id_generator=SeqIds(context.task_id))
        if not context.current_task:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.submitted, timestamp=TS["submitted"]),
                    history=[context.message],
                )
            )
        for step in sc["steps"]:
            if step[0] == "working":
                msg = up.new_agent_message([text_part(step[1])]) if step[1] else None
                await up.update_status(TaskState.working, message=msg, timestamp=TS["working"])
            elif step[0] == "artifact":
                _, aid, name, parts, append, last = step
                await up.add_artifact(parts, artifact_id=aid, name=name, append=append, last_chunk=last)
            elif step[0] == "completed":
                msg = up.new_agent_message(step[1]) if step[1] else None
                await up.update_status(TaskState.completed, message=msg, final=True, timestamp=TS["completed"])

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Recorder(httpx.AsyncBaseTransport):
    def __init__(self, inner):
        self.inner, self.log = inner, []

    async def handle_async_request(self, request):
        body = await request.aread()
        resp = await self.inner.handle_async_request(request)
        data = await resp.aread()
        self.log.append({"request": body, "response": data, "url": str(request.url)})
        return httpx.Response(resp.status_code, headers=resp.headers, content=data, request=request)

    def take(self):
        out, self.log = self.log, []
        return out


def make_card():
    return AgentCard(
        name=L,
        description="Retail funnel answers from the Northwind Retail Pulse panel.",
        url="http://funnel.test/a2a/jsonrpc",
        preferred_transport="JSONRPC",
        additional_interfaces=[
            AgentInterface(url="http://funnel.test/a2a/jsonrpc", transport="JSONRPC"),
            AgentInterface(url="http://funnel.test/a2a/rest", transport="HTTP+JSON"),
        ],
        version="1.7.3",
        provider=AgentProvider(organization="Upperhand Research Ops", url="https://upperhand.example"),
        capabilities=AgentCapabilities(
            streaming=True,
            extensions=[
                AgentExtension(
                    uri=EXT_URI, description="Citations v1 data Parts (media type in Part metadata)", required=False
                )
            ],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json", CIT_MT],
        skills=[
            AgentSkill(
                id="funnel",
                name="Retail funnel metrics",
                description="Basket size, channel split, footfall and loyalty metrics with citations.",
                tags=["retail", "quantitative"],
                examples=["Mean basket size in Q1 2026?"],
                output_modes=["application/json", CIT_MT],
            )
        ],
    )


class Agent:
    def __init__(self, card, store=None):
        self.card = card
        handler = DefaultRequestHandler(
            ScriptedExecutor(), store or InMemoryTaskStore(), request_context_builder=FixedIdBuilder()
        )
        rpc_app = A2AStarletteApplication(card, handler).build(rpc_url="/a2a/jsonrpc")
        rest_app = A2ARESTFastAPIApplication(card, handler).build(rpc_url="/a2a/rest")

        async def app(scope, receive, send):
            target = rest_app if scope.get("path", "").startswith("/a2a/rest") else rpc_app
            await target(scope, receive, send)

        self.rec = Recorder(httpx.ASGITransport(app=app))
        self.http = httpx.AsyncClient(transport=self.rec, base_url="http://funnel.test")

    def client(self, transport="JSONRPC", streaming=False):
        cfg = ClientConfig(httpx_client=self.http, streaming=streaming, supported_transports=[transport])
        return ClientFactory(cfg).create(self.card)

    async def send(self, msg_id, context_id, task_id, text, steps, transport="JSONRPC", streaming=False):
        SCRIPTS[msg_id] = {"steps": steps}
        NextTaskId.value = task_id
        msg = Message(message_id=msg_id, context_id=context_id, role=Role.user, parts=[text_part(text)])
        cl = self.client(transport, streaming)
        return [ev async for ev in cl.send_message(msg)]


def artifact(aid, name, parts, append=None, last=None):
    return ("artifact", aid, name, parts, append, last)


def write_bytes(rel, data: bytes, gz=False):
    p = OUT / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(gzip.compress(data, mtime=0) if gz else data)


def jsonl_of(records):
    lines = []
    for r in records:
        lines.append(r["request"].strip())
        lines.append(r["response"].strip())
    return b"\n".join(lines) + b"\n", len(lines)


def sse_events(data: bytes) -> int:
    return sum(
        1
        for block in data.replace(b"\r\n", b"\n").split(b"\n\n")
        if any(ln.startswith(b"data:") for ln in block.split(b"\n"))
    )


async def main():
    card = make_card()
    ag = Agent(card)
    r = await ag.http.get("/.well-known/agent-card.json")
    ag.rec.take()
    write_bytes("legacy-funnel/agent-card.json", r.content)
    FR.agent(L, "legacy-funnel/agent-card.json", True, True)

    # ---- rpc-v03.jsonl ------------------------------------------------------
    f = "legacy-funnel/rpc-v03.jsonl"
    ctx = "ctx-funnel-rpc"
    await ag.send(
        "msg-fnl-rpc-001",
        ctx,
        "task-fnl-rpc-basket",
        "Mean basket size, Q1 2026?",
        [
            ("working", "Reading nw_pulse_long.basket_size"),
            artifact(
                "art-basket", "basket", [text_part("Mean basket €42.70"), data_part(Q_BASKET), cite_part(CIT_NORTHWIND)]
            ),
            ("completed", None),
        ],
    )
    await ag.send(
        "msg-fnl-rpc-002",
        ctx,
        "task-fnl-rpc-visits",
        "Visits per week, new stores?",
        [
            ("working", None),
            artifact("art-visits", "visits", [data_part(Q_VISITS), cite_part(CIT_NORTHWIND_ZERO, "mimeType")]),
            ("completed", None),
        ],
    )
    cl = ag.client()
    await cl.get_task(TaskQueryParams(id="task-fnl-rpc-basket"))
    data, n = jsonl_of(ag.rec.take())
    write_bytes(f, data)
    FR.file(
        f,
        "jsonl",
        ["0.3-jsonrpc"],
        f"{SDK} JSON-RPC client+server, in-process",
        n,
        "v0.3 JSON-RPC log (kind-tagged): message/send x2 (bare Task results), tasks/get. "
        "Citations carry their media type in Part metadata (mediaType / mimeType).",
    )
    FR.add_copy(
        "task:task-fnl-rpc-basket",
        L,
        copy_entry(f, "completed", True, [cit_summary(CIT_NORTHWIND)], [Q_BASKET], 2),
        task_id="task-fnl-rpc-basket",
        context_id=ctx,
    )
    key = "task:task-fnl-rpc-visits"
    FR.add_copy(
        key,
        L,
        copy_entry(f, "completed", True, [cit_summary(CIT_NORTHWIND_ZERO, valid=False)], [Q_VISITS], 0),
        task_id="task-fnl-rpc-visits",
        context_id=ctx,
    )
    FR.plant("invalid-citation", "error", key, f, "Citation (media type in metadata.mimeType) has base.n = 0.")

    # ---- stream-v03.sse : message/stream -------------------------------------
    f = "legacy-funnel/stream-v03.sse"
    ctx = "ctx-funnel-sse"
    await ag.send(
        "msg-fnl-sse-001",
        ctx,
        "task-fnl-sse-channel",
        "Channel split, Q1 2026?",
        [
            ("working", "Reading nw_pulse_long.channel"),
            artifact("art-channel", "channel", [data_part(Q_CHANNEL)], False, False),
            artifact("art-channel", None, [cite_part(CIT_NORTHWIND_CHANNEL)], True, True),
            ("completed", None),
        ],
        streaming=True,
    )
    raw = ag.rec.take()[0]["response"]
    write_bytes(f, raw)
    FR.file(
        f,
        "sse",
        ["0.3-jsonrpc"],
        f"{SDK} JSON-RPC message/stream",
        sse_events(raw),
        "v0.3 JSON-RPC SSE: task, status-update working (agent text), artifact-update "
        "chunks (citation appended in the 2nd chunk), final status-update.",
    )
    FR.add_copy(
        "task:task-fnl-sse-channel",
        L,
        copy_entry(f, "completed", True, [cit_summary(CIT_NORTHWIND_CHANNEL)], [Q_CHANNEL], 1),
        task_id="task-fnl-sse-channel",
        context_id=ctx,
    )

    # ---- stream-v03-footfall.sse.gz : another message/stream, gzip ----------
    f = "legacy-funnel/stream-v03-footfall.sse.gz"
    ctx = "ctx-funnel-sse"
    await ag.send(
        "msg-fnl-sse-002",
        ctx,
        "task-fnl-sse-footfall",
        "Footfall index, Q1 2026?",
        [
            ("working", None),
            artifact("art-footfall", "footfall", [text_part("Footfall index 103.4"), data_part(Q_FOOTFALL)]),
            artifact("art-footfall-citation", "citation", [cite_part(CIT_FOOTFALL, "media_type")]),
            ("completed", [text_part("Footfall is up 2.1% on the prior quarter.")]),
        ],
        streaming=True,
    )
    raw = ag.rec.take()[0]["response"]
    write_bytes(f, raw, gz=True)
    FR.file(
        f,
        "sse",
        ["0.3-jsonrpc"],
        f"{SDK} JSON-RPC message/stream; gzip by the generator",
        sse_events(raw),
        "gzip v0.3 JSON-RPC SSE: numbers and citation in sibling artifacts; citation media "
        "type in metadata.media_type; final status carries an agent text message.",
        gzip=True,
    )
    FR.add_copy(
        "task:task-fnl-sse-footfall",
        L,
        copy_entry(f, "completed", True, [cit_summary(CIT_FOOTFALL)], [Q_FOOTFALL], 2),
        task_id="task-fnl-sse-footfall",
        context_id=ctx,
    )

    # ---- REST: rest-stream-v03.sse and rest-send-v03.json ----------------
    f = "legacy-funnel/rest-stream-v03.sse"
    ctx = "ctx-funnel-rest"
    await ag.send(
        "msg-fnl-rest-001",
        ctx,
        "task-fnl-rest-loyalty",
        "Loyalty tiers, Q1 2026?",
        [
            ("working", "Reading nw_pulse_long.loyalty_tier"),
            artifact("art-loyalty", "loyalty", [data_part(Q_LOYALTY)], False, False),
            artifact("art-loyalty", None, [cite_part(CIT_LOYALTY)], True, True),
            ("completed", None),
        ],
        transport="HTTP+JSON",
        streaming=True,
    )
    raw = ag.rec.take()[0]["response"]
    write_bytes(f, raw)
    FR.file(
        f,
        "sse",
        ["0.3-rest"],
        f"{SDK} HTTP+JSON POST /v1/message:stream",
        sse_events(raw),
        "v0.3 REST SSE as the 0.3 SDK sends it: each event pretty-printed over many data: "
        'lines; parts under "content", data parts as {"data":{"data":{...}}}.',
    )
    FR.add_copy(
        "task:task-fnl-rest-loyalty",
        L,
        copy_entry(f, "completed", True, [cit_summary(CIT_LOYALTY)], [Q_LOYALTY], 1),
        task_id="task-fnl-rest-loyalty",
        context_id=ctx,
    )

    f = "legacy-funnel/rest-send-v03.json"
    await ag.send(
        "msg-fnl-rest-002",
        ctx,
        "task-fnl-rest-seasonal",
        "Gift spend, Q4 2025?",
        [
            ("working", None),
            artifact(
                "art-gifts",
                "gifts",
                [text_part("Mean gift spend €86.50"), data_part(Q_SEASONAL), cite_part(CIT_SEASONAL)],
            ),
            ("completed", None),
        ],
        transport="HTTP+JSON",
    )
    raw = ag.rec.take()[0]["response"]
    write_bytes(f, raw)
    FR.file(
        f,
        "json",
        ["0.3-rest"],
        f"{SDK} HTTP+JSON POST /v1/message:send",
        1,
        'v0.3 REST message:send response document ({"task":{...}}, proto-JSON of the 0.3 gRPC schema).',
    )
    FR.add_copy(
        "task:task-fnl-rest-seasonal",
        L,
        copy_entry(f, "completed", True, [cit_summary(CIT_SEASONAL)], [Q_SEASONAL], 1),
        task_id="task-fnl-rest-seasonal",
        context_id=ctx,
    )

    # ---- task-store rows from the 0.3.26 DatabaseTaskStore (NULL) ---------
    db = OUT / "legacy-funnel" / "task-store.sqlite"
    if not db.exists():
        raise SystemExit("run make_samples_13.py first (it creates the 1.3 tasks table)")
    engine = create_async_engine(f"sqlite+aiosqlite:///{db}")
    dbag = Agent(card, DatabaseTaskStore(engine))
    ctx = "ctx-funnel-db-legacy"
    await dbag.send(
        "msg-fnl-db-001",
        ctx,
        "task-fnl-db-basket-q3",
        "Basket size, Q3 2025?",
        [
            ("working", "Reading nw_pulse_long.basket_size"),
            artifact("art-basket", "basket", [data_part(Q_BASKET_LEGACY), cite_part(CIT_NORTHWIND_LEGACY)]),
            ("completed", None),
        ],
    )
    await dbag.send(
        "msg-fnl-db-002",
        ctx,
        "task-fnl-db-footfall",
        "Footfall index, Q1 2026?",
        [
            ("working", None),
            artifact("art-footfall", "footfall", [data_part(Q_FOOTFALL)]),
            artifact("art-footfall-citation", "citation", [cite_part(CIT_FOOTFALL)]),
            ("completed", [text_part("Footfall index 103.4.")]),
        ],
    )
    dbag.rec.take()
    await engine.dispose()
    f_db = "legacy-funnel/task-store.sqlite"
    FR.add_copy(
        "task:task-fnl-db-basket-q3",
        L,
        copy_entry(f_db, "completed", True, [cit_summary(CIT_NORTHWIND_LEGACY)], [Q_BASKET_LEGACY], 1),
        task_id="task-fnl-db-basket-q3",
        context_id=ctx,
    )
    FR.add_copy(
        "task:task-fnl-db-footfall",
        L,
        copy_entry(f_db, "completed", True, [cit_summary(CIT_FOOTFALL)], [Q_FOOTFALL], 1),
        task_id="task-fnl-db-footfall",
        context_id=ctx,
    )
    FR.file(
        f_db,
        "sqlite",
        ["1.0-store", "0.3-store"],
        'a2a-sdk 1.3.0 DatabaseTaskStore (rows "1.0" and, via core_to_compat_task_model, '
        '"0.3") + a2a-sdk 0.3.26 DatabaseTaskStore (rows with protocol_version NULL), '
        "SQLite via aiosqlite",
        5,
        'SDK task store, table "tasks": 2 rows protocol_version "1.0", 1 row "0.3", 2 rows '
        "NULL (written by the 0.3.26 store, which has no protocol_version column).",
    )
    FR.write()


if __name__ == "__main__":
    asyncio.run(main())
