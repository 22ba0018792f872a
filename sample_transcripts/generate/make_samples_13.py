"""Sample transcripts made by the real a2a-sdk 1.3.0 (run in the 1.3.0 venv).

Server: the SDK's Starlette routes (agent card, JSON-RPC with v0.3 compat,
HTTP+JSON REST with v0.3 compat) around DefaultRequestHandler and a scripted
AgentExecutor.  Client: the SDK's own ClientFactory clients.  Everything runs
in-process over httpx.ASGITransport; a recording transport keeps the exact
request and response bytes, which are written to the files unchanged (except
where a post-processing step is named: truncation, CRLF, gzip).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import random
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Deterministic uuid4 (JSON-RPC request ids etc. generated inside the SDK).
_rng = random.Random(1300)
uuid.uuid4 = lambda: uuid.UUID(int=_rng.getrandbits(128), version=4)

import httpx  # noqa: E402
from a2a.client import ClientConfig, ClientFactory  # noqa: E402
from a2a.compat.v0_3.model_conversions import core_to_compat_task_model  # noqa: E402
from a2a.helpers.proto_helpers import new_task_from_user_message  # noqa: E402
from a2a.server.agent_execution import AgentExecutor  # noqa: E402
from a2a.server.agent_execution.simple_request_context_builder import (  # noqa: E402
    SimpleRequestContextBuilder,
)
from a2a.server.id_generator import IDGenerator  # noqa: E402
from a2a.server.request_handlers import DefaultRequestHandler  # noqa: E402
from a2a.server.routes import (  # noqa: E402
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import DatabaseTaskStore, InMemoryTaskStore, TaskUpdater  # noqa: E402
from a2a.types import a2a_pb2 as pb  # noqa: E402
from common import (  # noqa: E402  # noqa: E402
    CIT_BHM,
    CIT_BHM_NOFUNC,
    CIT_MT,
    CIT_NORTHWIND,
    CIT_NORTHWIND_CHANNEL,
    CIT_NORTHWIND_Q4,
    CIT_SANTE,
    CIT_SANTE_SMALL,
    CIT_VERSANT_W5,
    CIT_VERSANT_W6,
    CIT_VERSANT_W6_CONSIDER,
    EXT_URI,
    OUT,
    Q_BASKET,
    Q_BASKET_Q4,
    Q_CHANNEL,
    Q_CONSIDER_W6,
    Q_FUNNEL_W6,
    Q_NPS,
    Q_NPS_R4,
    Q_SANTE,
    Q_SANTE_REGION,
    Q_SANTE_SMALL,
    Q_SHARE_W5,
    Q_UNCITED,
    TS,
    Fragment,
    cit_summary,
    copy_entry,
)
from google.protobuf import struct_pb2  # noqa: E402
from google.protobuf.json_format import ParseDict  # noqa: E402
from sqlalchemy.ext.asyncio import create_async_engine  # noqa: E402
from starlette.applications import Starlette  # noqa: E402

SDK = "a2a-sdk 1.3.0"
FR = Fragment("sdk13")

# ---------------------------------------------------------------------------
# parts


def pb_text(s):
    return pb.Part(text=s)


def pb_data(d, media_type=None, metadata=None):
    p = pb.Part(data=ParseDict(d, struct_pb2.Value()))
    if media_type:
        p.media_type = media_type
    if metadata:
        p.metadata.update(metadata)
    return p


def pb_citation(d, mode="mt"):
    """mode 'mt': v1 mediaType only; 'mt+meta': also metadata.mediaType."""
    if mode == "mt":
        return pb_data(d, CIT_MT)
    return pb_data(d, CIT_MT, {"mediaType": CIT_MT})


# ---------------------------------------------------------------------------
# scripted executor: one script per user messageId

SCRIPTS: dict[str, dict] = {}


class SeqIds(IDGenerator):
    def __init__(self, prefix):
        self.prefix = prefix
        self.n = 0

    def generate(self, context):
        self.n += 1
        return f"{self.prefix}-agent-msg-{self.n}"


class NextTaskId(IDGenerator):
    value = None

    n = 0

    def generate(self, context):
        if NextTaskId.value:
            return NextTaskId.value
        NextTaskId.n += 1
        return f"task-unused-{NextTaskId.n}"


class ScriptedExecutor(AgentExecutor):
    async def execute(self, context, event_queue):
        sc = SCRIPTS[context.message.message_id]
        if sc["kind"] == "message":
            msg = pb.Message(
                message_id=sc["reply_id"], context_id=context.context_id, role=pb.Role.ROLE_AGENT, parts=sc["parts"]
            )
            await event_queue.enqueue_event(msg)
            return
        up = TaskUpdater(event_queue, context.task_id, context.context_id, message_id_generator=SeqIds(context.task_id))
        if not context.current_task:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        for step in sc["steps"]:
            if step[0] == "working":
                msg = up.new_agent_message([pb_text(step[1])]) if step[1] else None
                await up.update_status(pb.TaskState.TASK_STATE_WORKING, message=msg, timestamp=TS["working"])
            elif step[0] == "artifact":
                _, aid, name, parts, append, last = step
                await up.add_artifact(parts, artifact_id=aid, name=name, append=append, last_chunk=last)
            elif step[0] == "completed":
                msg = up.new_agent_message(step[1]) if step[1] else None
                await up.update_status(pb.TaskState.TASK_STATE_COMPLETED, message=msg, timestamp=TS["completed"])

    async def cancel(self, context, event_queue):
        raise NotImplementedError


# ---------------------------------------------------------------------------
# recording transport


class Recorder(httpx.AsyncBaseTransport):
    def __init__(self, inner):
        self.inner = inner
        self.log = []

    async def handle_async_request(self, request):
        body = await request.aread()
        resp = await self.inner.handle_async_request(request)
        data = await resp.aread()
        self.log.append(
            {
                "method": request.method,
                "url": str(request.url),
                "request": body,
                "status": resp.status_code,
                "content_type": resp.headers.get("content-type", ""),
                "response": data,
            }
        )
        return httpx.Response(resp.status_code, headers=resp.headers, content=data, request=request)

    def take(self):
        out, self.log = self.log, []
        return out


# ---------------------------------------------------------------------------
# agents


def make_card(
    name, host, description, *, list_media_type=True, skill_id="quant", skill_name="Quantitative survey answers"
):
    out_modes = ["text/plain", "application/json"] + ([CIT_MT] if list_media_type else [])
    skill_modes = ["application/json"] + ([CIT_MT] if list_media_type else [])
    return ParseDict(
        {
            "name": name,
            "description": description,
            "version": "2.4.0",
            "provider": {"organization": "Upperhand Research Ops", "url": "https://upperhand.example"},
            "supportedInterfaces": [
                {"url": f"http://{host}/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": f"http://{host}/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": f"http://{host}/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            ],
            "capabilities": {
                "streaming": True,
                "extensions": [
                    {
                        "uri": EXT_URI,
                        "description": "Citations v1: every quantitative answer carries a citation data Part",
                        "required": False,
                    }
                ],
            },
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": out_modes,
            "skills": [
                {
                    "id": skill_id,
                    "name": skill_name,
                    "description": "Answers quantitative questions from survey data with "
                    "segment shares, bases and a re-runnable citation.",
                    "tags": ["survey", "quantitative"],
                    "examples": ["What share of 18-34s are aware of the brand in W6?"],
                    "outputModes": skill_modes,
                }
            ],
        },
        pb.AgentCard(),
    )


class Agent:
    def __init__(self, card, host, store=None):
        self.card = card
        self.host = host
        self.store = store or InMemoryTaskStore()
        handler = DefaultRequestHandler(
            ScriptedExecutor(),
            self.store,
            card,
            request_context_builder=SimpleRequestContextBuilder(task_id_generator=NextTaskId()),
        )
        routes = (
            create_agent_card_routes(card)
            + create_jsonrpc_routes(handler, "/a2a/jsonrpc", enable_v0_3_compat=True)
            + create_rest_routes(handler, enable_v0_3_compat=True, path_prefix="/a2a/rest")
        )
        self.app = Starlette(routes=routes)
        self.rec = Recorder(httpx.ASGITransport(app=self.app))
        self.http = httpx.AsyncClient(transport=self.rec, base_url=f"http://{host}")

    def client(self, binding="JSONRPC", streaming=False, card=None):
        cfg = ClientConfig(httpx_client=self.http, streaming=streaming, supported_protocol_bindings=[binding])
        return ClientFactory(cfg).create(card or self.card)

    async def send(self, msg_id, context_id, task_id, text, script, binding="JSONRPC", streaming=False, card=None):
        SCRIPTS[msg_id] = script
        NextTaskId.value = task_id
        msg = pb.Message(message_id=msg_id, context_id=context_id, role=pb.Role.ROLE_USER, parts=[pb_text(text)])
        cl = self.client(binding, streaming, card)
        return [ev async for ev in cl.send_message(pb.SendMessageRequest(message=msg))]


# ---------------------------------------------------------------------------
# writers


def write_bytes(rel, data: bytes, gz=False):
    p = OUT / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        data = gzip.compress(data, mtime=0)
    p.write_bytes(data)


def jsonl_of(records):
    """One line per request body and one per response body, bytes as sent/received."""
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


async def save_card(agent, rel):
    r = await agent.http.get("/.well-known/agent-card.json")
    agent.rec.take()
    write_bytes(rel, r.content)


# ---------------------------------------------------------------------------
# scenario helpers


def artifact(aid, name, parts, append=False, last=True):
    return ("artifact", aid, name, parts, append, last)


async def main():
    # ======================= Versant Insights Agent ========================
    versant_agent = "Versant Insights Agent"
    vcard = make_card(
        versant_agent,
        "versant.test",
        "Quantitative brand-tracking answers from the Versant Mega Tracker and the Brand Health Monitor.",
    )
    va = Agent(vcard, "versant.test")
    await save_card(va, "versant-insights/agent-card.json")
    FR.agent(versant_agent, "versant-insights/agent-card.json", True, True)

    # ---- rpc-v1.jsonl : JSON-RPC client log -----------------------------
    f_rpc = "versant-insights/rpc-v1.jsonl"
    ctx = "ctx-versant-rpc"
    await va.send(
        "msg-vrs-rpc-001",
        ctx,
        "task-vrs-rpc-funnel",
        "Awareness funnel by age, W6?",
        {
            "kind": "task",
            "steps": [
                ("working", "Querying versant_flat (s14r5)"),
                artifact("art-funnel", "funnel", [pb_text("Awareness funnel by age, W6"), pb_data(Q_FUNNEL_W6)]),
                artifact("art-funnel-citation", "citation", [pb_citation(CIT_VERSANT_W6)]),
                ("completed", None),
            ],
        },
    )
    await va.send(
        "msg-vrs-rpc-002",
        ctx,
        "task-vrs-rpc-trend",
        "Awareness trend W4-W6?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact("art-trend", "trend", [pb_text("Awareness, last three waves"), pb_data(Q_UNCITED)]),
                ("completed", None),
            ],
        },
    )
    rpc_recs = va.rec.take()
    # streamed task: its capture is cut short (stream-partial.sse), the
    # completed copy comes from GetTask below.
    await va.send(
        "msg-vrs-rpc-003",
        ctx,
        "task-vrs-stream-share",
        "Brand share, W5?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact("art-share", "share", [pb_data(Q_SHARE_W5)], False, False),
                artifact("art-share", None, [pb_citation(CIT_VERSANT_W5)], True, True),
                ("completed", None),
            ],
        },
        streaming=True,
    )
    stream_rec = va.rec.take()
    cl = va.client()
    await cl.get_task(pb.GetTaskRequest(id="task-vrs-stream-share"))
    await cl.list_tasks(pb.ListTasksRequest(context_id=ctx, include_artifacts=True))
    with contextlib.suppress(Exception):
        await cl.get_task(pb.GetTaskRequest(id="task-does-not-exist"))
    recs = rpc_recs + va.rec.take()
    # rpc log = the two SendMessage calls, then GetTask / ListTasks / GetTask(error)
    data, n = jsonl_of(recs)
    write_bytes(f_rpc, data)
    FR.file(
        f_rpc,
        "jsonl",
        ["1.0-jsonrpc"],
        f"{SDK} JSON-RPC client+server, in-process",
        n,
        'v1.0 JSON-RPC client log: SendMessage x2 ({"task":...}), GetTask (bare Task), '
        'ListTasks ({"tasks":[...]} with includeArtifacts) and a GetTask error '
        "(-32001 Task not found).",
    )
    FR.error(f_rpc, 1)
    # partial stream capture: keep the SSE bytes up to (and including) the
    # first artifact chunk; the citation chunk and the COMPLETED status are cut.
    sse = stream_rec[0]["response"]
    blocks = sse.replace(b"\r\n", b"\n").split(b"\n\n")
    partial = b"\n\n".join(blocks[:3]) + b"\n\n"  # also: CRLF -> LF
    f_part = "versant-insights/stream-partial.sse"
    write_bytes(f_part, partial)
    FR.file(
        f_part,
        "sse",
        ["1.0-jsonrpc"],
        f"{SDK} JSON-RPC SendStreamingMessage, truncated "
        "after the 3rd event and rewritten from CRLF to LF line endings by the generator",
        sse_events(partial),
        "Stream capture cut short (client went away): Task snapshot, WORKING status, first "
        "artifact chunk with the numbers; no citation chunk, no terminal state. The completed "
        "task is in rpc-v1.jsonl (GetTask / ListTasks).",
    )

    key = "task:task-vrs-rpc-funnel"
    FR.add_copy(
        key,
        versant_agent,
        copy_entry(f_rpc, "completed", True, [cit_summary(CIT_VERSANT_W6)], [Q_FUNNEL_W6], 2),
        task_id="task-vrs-rpc-funnel",
        context_id=ctx,
    )
    key = "task:task-vrs-rpc-trend"
    FR.add_copy(
        key,
        versant_agent,
        copy_entry(f_rpc, "completed", True, [], [Q_UNCITED], 1),
        task_id="task-vrs-rpc-trend",
        context_id=ctx,
    )
    FR.plant(
        "uncited-result",
        "error",
        key,
        f_rpc,
        "Task returns quantitative JSON (awareness trend, 3 numeric values) with no citation Part at all.",
    )
    key = "task:task-vrs-stream-share"
    FR.add_copy(
        key,
        versant_agent,
        copy_entry(f_part, "working", False, [], [Q_SHARE_W5], 0),
        task_id="task-vrs-stream-share",
        context_id=ctx,
    )
    FR.add_copy(
        key,
        versant_agent,
        copy_entry(f_rpc, "completed", True, [cit_summary(CIT_VERSANT_W5)], [Q_SHARE_W5], 0),
        task_id="task-vrs-stream-share",
        context_id=ctx,
    )

    # ---- stream-v1.sse : SendStreamingMessage, citation in a later chunk ---
    f_sse = "versant-insights/stream-v1.sse"
    ctx = "ctx-versant-stream"
    await va.send(
        "msg-vrs-sse-001",
        ctx,
        "task-vrs-stream-consider",
        "Consideration among aware adults, W6?",
        {
            "kind": "task",
            "steps": [
                ("working", "Querying versant_flat (s15r1)"),
                artifact(
                    "art-consider",
                    "consideration",
                    [pb_text("Consideration, W6"), pb_data(Q_CONSIDER_W6)],
                    False,
                    False,
                ),
                artifact("art-consider", None, [pb_citation(CIT_VERSANT_W6_CONSIDER)], True, True),
                ("completed", None),
            ],
        },
        streaming=True,
    )
    r = va.rec.take()[0]
    write_bytes(f_sse, r["response"])
    FR.file(
        f_sse,
        "sse",
        ["1.0-jsonrpc"],
        f"{SDK} JSON-RPC SendStreamingMessage",
        sse_events(r["response"]),
        "v1.0 JSON-RPC SSE: Task snapshot, WORKING status with agent text, artifact chunk 1 "
        "(text + numbers), chunk 2 append/lastChunk with the citation Part, COMPLETED.",
    )
    FR.add_copy(
        "task:task-vrs-stream-consider",
        versant_agent,
        copy_entry(f_sse, "completed", True, [cit_summary(CIT_VERSANT_W6_CONSIDER)], [Q_CONSIDER_W6], 2),
        task_id="task-vrs-stream-consider",
        context_id=ctx,
    )

    # ---- rest-send.json : POST /message:send --------------------------------
    f_rs = "versant-insights/rest-send.json"
    ctx = "ctx-versant-rest"
    await va.send(
        "msg-vrs-rest-001",
        ctx,
        "task-vrs-rest-nps",
        "NPS among category buyers (r4)?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact(
                    "art-nps", "nps", [pb_text("NPS, Wave 14 (r4)"), pb_data(Q_NPS_R4), pb_citation(CIT_BHM_NOFUNC)]
                ),
                ("completed", None),
            ],
        },
        binding="HTTP+JSON",
    )
    r = va.rec.take()[0]
    write_bytes(f_rs, r["response"])
    FR.file(
        f_rs,
        "json",
        ["1.0-rest"],
        f"{SDK} HTTP+JSON POST /message:send",
        1,
        'v1.0 REST SendMessage response document {"task":{...}} (content-type application/a2a+json).',
    )
    key = "task:task-vrs-rest-nps"
    FR.add_copy(
        key,
        versant_agent,
        copy_entry(f_rs, "completed", True, [cit_summary(CIT_BHM_NOFUNC, valid=False)], [Q_NPS_R4], 1),
        task_id="task-vrs-rest-nps",
        context_id=ctx,
    )
    FR.plant(
        "invalid-citation",
        "error",
        key,
        f_rs,
        "Citation source.function is null, so the source triple cannot be re-run.",
    )

    # ---- rest-stream-v1.sse + rest-list-tasks.json : dropped citation -------
    f_rss = "versant-insights/rest-stream-v1.sse"
    f_rl = "versant-insights/rest-list-tasks.json"
    ctx = "ctx-versant-drop"
    await va.send(
        "msg-vrs-rest-002",
        ctx,
        "task-vrs-rest-nps-main",
        "NPS among category buyers?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact("art-nps-citation", "citation", [pb_citation(CIT_BHM)]),
                ("completed", [pb_text("NPS is +31 among category buyers (Wave 14)."), pb_data(Q_NPS)]),
            ],
        },
        binding="HTTP+JSON",
        streaming=True,
    )
    r = va.rec.take()[0]
    write_bytes(f_rss, r["response"])
    FR.file(
        f_rss,
        "sse",
        ["1.0-rest"],
        f"{SDK} HTTP+JSON POST /message:stream",
        sse_events(r["response"]),
        "v1.0 REST SSE (bare StreamResponse events): citation artifact, then COMPLETED "
        "status whose agent message holds the text answer and the numbers.",
    )
    r = await va.http.get("/a2a/rest/tasks", params={"contextId": ctx}, headers={"A2A-Version": "1.0"})
    write_bytes(f_rl, va.rec.take()[0]["response"])
    FR.file(
        f_rl,
        "json",
        ["1.0-rest"],
        f"{SDK} HTTP+JSON GET /tasks?contextId=... (default: no artifacts)",
        1,
        'v1.0 REST ListTasks response {"tasks":[...]} stored as the archive copy; the SDK '
        "omits artifacts unless includeArtifacts=true, so the citation artifact is gone.",
    )
    key = "task:task-vrs-rest-nps-main"
    FR.add_copy(
        key,
        versant_agent,
        copy_entry(f_rss, "completed", True, [cit_summary(CIT_BHM)], [Q_NPS], 1),
        task_id="task-vrs-rest-nps-main",
        context_id=ctx,
    )
    FR.add_copy(
        key,
        versant_agent,
        copy_entry(f_rl, "completed", True, [], [Q_NPS], 1),
        task_id="task-vrs-rest-nps-main",
        context_id=ctx,
    )
    FR.plant(
        "dropped-part",
        "error",
        key,
        f_rl,
        "Completed copy lacks the citation Part (artifact art-nps-citation) that the "
        "stream copy in rest-stream-v1.sse has: ListTasks dropped the artifacts.",
    )

    # ---- compat-v03-rpc.jsonl : 0.3 client against this 1.3 server ---------
    f_cp = "versant-insights/compat-v03-rpc.jsonl"
    ctx = "ctx-versant-compat"
    card03 = pb.AgentCard()
    card03.CopyFrom(vcard)
    del card03.supported_interfaces[:]
    card03.supported_interfaces.append(
        pb.AgentInterface(url="http://versant.test/a2a/jsonrpc", protocol_binding="JSONRPC", protocol_version="0.3")
    )
    await va.send(
        "msg-vrs-compat-001",
        ctx,
        "task-vrs-compat-funnel",
        "Awareness funnel by age, W6 (legacy dashboard)?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact(
                    "art-funnel",
                    "funnel",
                    [pb_text("Awareness funnel by age, W6"), pb_data(Q_FUNNEL_W6), pb_citation(CIT_VERSANT_W6)],
                ),
                ("completed", None),
            ],
        },
        card=card03,
    )
    cl03 = va.client(card=card03)
    await cl03.get_task(pb.GetTaskRequest(id="task-vrs-compat-funnel"))
    data, n = jsonl_of(va.rec.take())
    write_bytes(f_cp, data)
    FR.file(
        f_cp,
        "jsonl",
        ["0.3-jsonrpc"],
        f"{SDK} server with enable_v0_3_compat; client: {SDK} CompatJsonRpcTransport (0.3 wire, no A2A-Version header)",
        n,
        "v0.3 JSON-RPC log (message/send, tasks/get) answered by the 1.3 server's 0.3 "
        "compatibility layer, which drops the citation Part's mediaType.",
    )
    key = "task:task-vrs-compat-funnel"
    FR.add_copy(
        key,
        versant_agent,
        copy_entry(f_cp, "completed", True, [cit_summary(CIT_VERSANT_W6, inferred=True)], [Q_FUNNEL_W6], 1),
        task_id="task-vrs-compat-funnel",
        context_id=ctx,
    )
    FR.plant(
        "citation-type-lost",
        "error",
        key,
        f_cp,
        "The 1.3 server's 0.3 conversion stripped mediaType from the citation data Part; "
        "only its keys (study, period, base, source) identify it.",
    )

    # ========================= Santé Panel Agent ===========================
    sante_agent = "Santé Panel Agent"
    scard = make_card(
        sante_agent,
        "sante.test",
        "Réponses chiffrées issues du panel Étude Santé 2026.",
        list_media_type=False,
        skill_id="sante-quant",
        skill_name="Indicateurs santé",
    )
    sa = Agent(scard, "sante.test")
    await save_card(sa, "sante-panel/agent-card.json")
    FR.agent(sante_agent, "sante-panel/agent-card.json", True, False)
    FR.plant(
        "card-mode-undeclared",
        "warning",
        None,
        "sante-panel/agent-card.json",
        "Card declares the Citations v1 extension but lists the citations media type in "
        "neither defaultOutputModes nor any skill outputModes.",
    )

    # ---- rpc-v1.jsonl.gz : bare Message result + small base ----------------
    f_sg = "sante-panel/rpc-v1.jsonl.gz"
    ctx = "ctx-sante-rpc"
    await sa.send(
        "msg-sante-001",
        ctx,
        None,
        "Répartition de la couverture complémentaire ?",
        {
            "kind": "message",
            "reply_id": "msg-sante-reply-001",
            "parts": [pb_text("46 % ont une mutuelle individuelle."), pb_data(Q_SANTE), pb_citation(CIT_SANTE)],
        },
    )
    await sa.send(
        "msg-sante-002",
        ctx,
        "task-sante-small",
        "Téléconsultation, médecins corses ?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact("art-teleconsult", "teleconsultation", [pb_data(Q_SANTE_SMALL), pb_citation(CIT_SANTE_SMALL)]),
                ("completed", None),
            ],
        },
    )
    data, n = jsonl_of(sa.rec.take())
    write_bytes(f_sg, data, gz=True)
    FR.file(
        f_sg,
        "jsonl",
        ["1.0-jsonrpc"],
        f"{SDK} JSON-RPC SendMessage x2; gzip by the generator",
        n,
        'gzip JSON Lines: SendMessage returning a bare {"message":...} with a citation, '
        "and a task whose citation has base.n = 24.",
        gzip=True,
    )
    FR.add_copy(
        "message:msg-sante-reply-001",
        sante_agent,
        copy_entry(f_sg, None, True, [cit_summary(CIT_SANTE)], [Q_SANTE], 1),
        task_id=None,
        context_id=ctx,
        message_id="msg-sante-reply-001",
    )
    key = "task:task-sante-small"
    FR.add_copy(
        key,
        sante_agent,
        copy_entry(f_sg, "completed", True, [cit_summary(CIT_SANTE_SMALL)], [Q_SANTE_SMALL], 0),
        task_id="task-sante-small",
        context_id=ctx,
    )
    FR.plant("small-base", "warning", key, f_sg, "Valid citation with base.n = 24 (below 30).")

    # ---- stream-v1-crlf.sse + list-tasks.log : dropped text part ----------
    f_sc = "sante-panel/stream-v1.sse"
    f_sl = "sante-panel/list-tasks.log"
    ctx = "ctx-sante-stream"
    cit_region = dict(CIT_SANTE, source={"table": "sante_panel", "column": "region", "function": "extractDistribution"})
    await sa.send(
        "msg-sante-003",
        ctx,
        "task-sante-regions",
        "Couverture par région ?",
        {
            "kind": "task",
            "steps": [
                ("working", "Interrogation de sante_panel (région × q7)…"),  # noqa: RUF001 (French sample text)
                artifact("art-regions", "régions", [pb_data(Q_SANTE_REGION), pb_citation(cit_region)]),
                ("completed", None),
            ],
        },
        streaming=True,
    )
    raw = sa.rec.take()[0]["response"]
    write_bytes(f_sc, raw)
    FR.file(
        f_sc,
        "sse",
        ["1.0-jsonrpc"],
        f"{SDK} JSON-RPC SendStreamingMessage",
        sse_events(raw),
        "v1.0 JSON-RPC SSE (\\r\\n line endings, as sse-starlette emits them); WORKING "
        "status carries a non-ASCII agent text message.",
    )
    cl = sa.client()
    await cl.list_tasks(pb.ListTasksRequest(context_id=ctx, include_artifacts=True, history_length=0))
    data, n = jsonl_of(sa.rec.take())
    write_bytes(f_sl, data)
    FR.file(
        f_sl,
        "jsonl",
        ["1.0-jsonrpc"],
        f"{SDK} JSON-RPC ListTasks (historyLength=0, includeArtifacts=true)",
        n,
        "JSON Lines with a .log extension: ListTasks request and response; history "
        "truncated to 0, so the agent's WORKING text message is not in this copy.",
    )
    key = "task:task-sante-regions"
    FR.add_copy(
        key,
        sante_agent,
        copy_entry(f_sc, "completed", True, [cit_summary(cit_region)], [Q_SANTE_REGION], 1),
        task_id="task-sante-regions",
        context_id=ctx,
    )
    FR.add_copy(
        key,
        sante_agent,
        copy_entry(f_sl, "completed", True, [cit_summary(cit_region)], [Q_SANTE_REGION], 0),
        task_id="task-sante-regions",
        context_id=ctx,
    )
    FR.plant(
        "dropped-part",
        "warning",
        key,
        f_sl,
        "Completed copy lacks the agent text Part of the WORKING status message (history "
        "truncated by historyLength=0) that the stream copy has.",
    )

    # ===== Legacy Funnel Agent, after its upgrade to 1.3: task-store rows ====
    funnel_agent = "Legacy Funnel Agent"
    db = OUT / "legacy-funnel" / "task-store.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    if db.exists():
        db.unlink()
    engine = create_async_engine(f"sqlite+aiosqlite:///{db}")
    lcard = make_card(funnel_agent, "funnel.test", "Retail funnel answers (Northwind Retail Pulse).")
    store10 = DatabaseTaskStore(engine)
    store03 = DatabaseTaskStore(engine, core_to_model_conversion=core_to_compat_task_model)
    await store10.initialize()
    la10 = Agent(lcard, "funnel.test", store10)
    la03 = Agent(lcard, "funnel.test", store03)
    ctx = "ctx-funnel-db"
    await la10.send(
        "msg-fnl-db-101",
        ctx,
        "task-fnl-db-basket-q1",
        "Basket size, Q1?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact("art-basket", "basket", [pb_data(Q_BASKET), pb_citation(CIT_NORTHWIND)]),
                ("completed", [pb_text("Mean basket €42.70 (Q1 2026).")]),
            ],
        },
    )
    await la10.send(
        "msg-fnl-db-102",
        ctx,
        "task-fnl-db-channel",
        "Channel split, Q1?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact("art-channel", "channel", [pb_data(Q_CHANNEL)]),
                artifact("art-channel-citation", "citation", [pb_citation(CIT_NORTHWIND_CHANNEL)]),
                ("completed", None),
            ],
        },
    )
    await la03.send(
        "msg-fnl-db-103",
        ctx,
        "task-fnl-db-basket-q4",
        "Basket size, Q4 2025?",
        {
            "kind": "task",
            "steps": [
                ("working", None),
                artifact("art-basket", "basket", [pb_data(Q_BASKET_Q4), pb_citation(CIT_NORTHWIND_Q4, "mt+meta")]),
                ("completed", None),
            ],
        },
    )
    la10.rec.take()
    la03.rec.take()
    await engine.dispose()
    f_db = "legacy-funnel/task-store.sqlite"
    for tid, data_, cit, texts, _pv in [
        ("task-fnl-db-basket-q1", Q_BASKET, CIT_NORTHWIND, 1, "1.0"),
        ("task-fnl-db-channel", Q_CHANNEL, CIT_NORTHWIND_CHANNEL, 0, "1.0"),
        ("task-fnl-db-basket-q4", Q_BASKET_Q4, CIT_NORTHWIND_Q4, 0, "0.3"),
    ]:
        st = "completed"
        FR.add_copy(
            f"task:{tid}",
            funnel_agent,
            copy_entry(f_db, st, True, [cit_summary(cit)], [data_], texts),
            task_id=tid,
            context_id=ctx,
        )
    # the file entry itself is written by make_samples_03.py (which adds the NULL rows)

    FR.write()


if __name__ == "__main__":
    asyncio.run(main())
