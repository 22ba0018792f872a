package main

import (
	"context"
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/log"
)

func storedCopy(key string, citations []citationSummary, payloads []map[string]any, textParts int) {
	stored[key] = copyOf(dir+"/task-store.json", "completed", citations, payloads, textParts)
}

// rpcScenarios: JSON-RPC (rpc.jsonl, stream.sse), with the SDK's own logging (sdk-log.jsonl) on the
// unary calls. Returns what the client returned, for client-objects.jsonl.
func (h *harness) rpcScenarios() []any {
	var objects []any
	rpc := h.client(a2a.TransportProtocolJSONRPC,
		a2aclient.WithCallInterceptors(a2aclient.NewLoggingInterceptor(&a2aclient.LoggingConfig{LogPayload: true})))
	ctx := log.AttachLogger(h.ctx, h.logger)
	c := "ctx-osp-rpc"

	f := dir + "/rpc.jsonl"
	plan("msg-osp-rpc-001", Script{Steps: []Step{working(""), artifact("art-heating", "heating",
		textPart("Main heating fuel, Wave 2"), jsonPart(qHeating), citationPart(citHeating)), completed()}})
	plan("msg-osp-rpc-002", Script{Steps: []Step{working(""), artifact("art-solar", "solar", dataPart(qSolar)), completed()}})
	h.logs.on = true
	heating := send(ctx, rpc, userMessage("msg-osp-rpc-001", c, "Main heating fuel, Wave 2?"))
	solar := send(ctx, rpc, userMessage("msg-osp-rpc-002", c, "Solar panel share by wave?"))
	getTask(ctx, rpc, taskID(heating))
	h.logs.on = false
	objects = append(objects, heating)
	tasks["heating"], tasks["solar"] = taskID(heating), taskID(solar)
	data, n := jsonLines(h.recorder.Take())
	write(f, data)
	frag.file(f, "jsonl", "1.0-jsonrpc", sdk+" a2aclient JSON-RPC transport and a2asrv JSON-RPC handler", n,
		"v1.0 JSON-RPC log: SendMessage x2 (answered {\"task\":...}) and GetTask. The heating artifact holds text, "+
			"application/json data and the citation.")
	frag.taskCopy(tasks["heating"], c, copyOf(f, "completed", cited(citHeating), []map[string]any{qHeating}, 1))
	frag.taskCopy(tasks["heating"], c, copyOf(dir+"/client-objects.jsonl", "completed", cited(citHeating), []map[string]any{qHeating}, 1))
	storedCopy("heating", cited(citHeating), []map[string]any{qHeating}, 1)
	frag.taskCopy(tasks["solar"], c, copyOf(f, "completed", nil, []map[string]any{qSolar}, 0))
	storedCopy("solar", nil, []map[string]any{qSolar}, 0)
	for _, p := range []string{f, dir + "/task-store.json"} {
		frag.plant("uncited-result", "error", "task:"+tasks["solar"], p,
			"Task returns quantitative JSON (solar panel share by wave, 2 numeric values) with no citation Part.")
	}

	fl := dir + "/sdk-log.jsonl"
	lines := splitLines(h.logs.buf)
	write(fl, h.logs.buf)
	frag.file(fl, "jsonl", "1.0-go-slog", sdk+" a2aclient and a2asrv logging interceptors (LogPayload) through slog.NewJSONHandler", lines,
		"What the SDK's own logging prints for the calls of rpc.jsonl, client and server side: \"a2a call started\" "+
			"with the request payload (the user's messages, a GetTask request) and \"a2a call finished\". It never "+
			"logs a response, so it holds no result.")

	// stream.sse: SendStreamingMessage, the citation in a later chunk
	fs := dir + "/stream.sse"
	c = "ctx-osp-stream"
	plan("msg-osp-sse-001", Script{Steps: []Step{
		working("Querying ohep_homes (tariff_type)"),
		chunk("art-tariff", "tariffs", false, false, textPart("Tariff types, Wave 2"), dataPart(qTariff)),
		chunk("art-tariff", "", true, true, citationPart(citTariff)),
		completed(),
	}})
	events := stream(h.ctx, h.client(a2a.TransportProtocolJSONRPC), userMessage("msg-osp-sse-001", c, "Tariff types, Wave 2?"))
	objects = append(objects, events...)
	tasks["tariff"] = string(events[0].(*a2a.Task).ID)
	r := h.recorder.Take()[0]
	write(fs, r.Response)
	frag.file(fs, "sse", "1.0-jsonrpc", sdk+" JSON-RPC SendStreamingMessage", sseEvents(r.Response),
		"v1.0 JSON-RPC SSE (an id: line per event): the Task, WORKING with agent text, artifact chunk 1 (text + "+
			"numbers), chunk 2 (append, lastChunk) with the citation, COMPLETED.")
	for _, p := range []string{fs, dir + "/client-objects.jsonl"} {
		frag.taskCopy(tasks["tariff"], c, copyOf(p, "completed", cited(citTariff), []map[string]any{qTariff}, 2))
	}
	storedCopy("tariff", cited(citTariff), []map[string]any{qTariff}, 2)
	return objects
}

// restScenarios: HTTP+JSON REST (rest-send.json, rest-stream.sse), a ListTasks without artifacts and a bare
// Message, the last two kept only as the client returned them.
func (h *harness) restScenarios() []any {
	var objects []any
	rest := h.client(a2a.TransportProtocolHTTPJSON)

	f := dir + "/rest-send.json"
	c := "ctx-osp-rest"
	plan("msg-osp-rest-001", Script{Steps: []Step{working("Querying ohep_homes (ev_kwh)"),
		artifact("art-ev", "ev charging", dataPart(qEV), citationPart(citEVZero)), completed()}})
	tasks["ev"] = taskID(send(h.ctx, rest, userMessage("msg-osp-rest-001", c, "Weekly EV charging on the new estates?")))
	write(f, h.recorder.Take()[0].Response)
	frag.file(f, "json", "1.0-rest", sdk+" HTTP+JSON POST /message:send", 1,
		"v1.0 REST SendMessage response document {\"task\":{...}}; its history holds the agent's WORKING text.")
	invalid := []citationSummary{summary(citEVZero, false, false)}
	frag.taskCopy(tasks["ev"], c, copyOf(f, "completed", invalid, []map[string]any{qEV}, 1))
	storedCopy("ev", invalid, []map[string]any{qEV}, 1)
	for _, p := range []string{f, dir + "/task-store.json"} {
		frag.plant("invalid-citation", "error", "task:"+tasks["ev"], p, "Citation base.n is 0, not a positive integer.")
	}

	fs := dir + "/rest-stream.sse"
	c = "ctx-osp-insulation"
	plan("msg-osp-rest-002", Script{Steps: []Step{working(""),
		artifact("art-insulation-citation", "citation", citationPart(citInsulation)),
		completed(textPart("Owner-occupied homes have 212.5 mm of loft insulation on average."), dataPart(qInsulation))}})
	tasks["insulation"] = string(stream(h.ctx, rest, userMessage("msg-osp-rest-002", c, "Loft insulation depth?"))[0].(*a2a.Task).ID)
	r := h.recorder.Take()[0]
	write(fs, r.Response)
	frag.file(fs, "sse", "1.0-rest", sdk+" HTTP+JSON POST /message:stream", sseEvents(r.Response),
		"v1.0 REST SSE (bare StreamResponse events): the Task, WORKING, the citation artifact, then the COMPLETED "+
			"status whose agent message holds the text answer and the numbers.")
	insulation := copyOf(fs, "completed", cited(citInsulation), []map[string]any{qInsulation}, 1)
	frag.taskCopy(tasks["insulation"], c, insulation)
	storedCopy("insulation", cited(citInsulation), []map[string]any{qInsulation}, 1)
	list, err := rest.ListTasks(h.ctx, &a2a.ListTasksRequest{ContextID: c})
	must(err)
	objects = append(objects, list)
	h.recorder.Take()
	fo := dir + "/client-objects.jsonl"
	frag.taskCopy(tasks["insulation"], c, copyOf(fo, "completed", nil, []map[string]any{qInsulation}, 1))
	frag.plant("dropped-part", "error", "task:"+tasks["insulation"], fo,
		"The logged ListTasks result (no includeArtifacts) lacks the citation Part (artifact art-insulation-citation) "+
			"that rest-stream.sse holds.")

	// a bare Message answer, kept only as the client returned it
	c = "ctx-osp-heatpump"
	plan("msg-osp-rest-010", Script{ReplyID: "msg-osp-reply-010",
		Reply: parts(textPart("Heat pumps reach a mean COP of 3.1."), dataPart(qHeatPump), citationPart(citHeatPump))})
	objects = append(objects, send(h.ctx, rest, userMessage("msg-osp-rest-010", c, "Mean heat-pump COP?")))
	h.recorder.Take()
	frag.messageCopy("msg-osp-reply-010", c, copyOf(fo, "", cited(citHeatPump), []map[string]any{qHeatPump}, 1))
	return objects
}

func (h *harness) clientObjects(objects []any) {
	f := dir + "/client-objects.jsonl"
	data, n := objectLines(objects)
	write(f, data)
	frag.file(f, "jsonl", "1.0-go-client-objects", sdk+" a2aclient results written with json.Marshal", n,
		"What the Go client returned, json.Marshal one a line: a Task from SendMessage, the events of a JSON-RPC "+
			"stream (bare Task, TaskStatusUpdateEvent and TaskArtifactUpdateEvent objects, no kind or wrapper), "+
			"a ListTasksResponse (no artifacts) and a bare Message.")
}

// compatScenario: the SDK's v0.3 compatibility layer, client and server (compat-v03-rpc.jsonl).
func (h *harness) compatScenario() {
	f := dir + "/compat-v03-rpc.jsonl"
	c := "ctx-osp-compat"
	endpoint := &a2a.AgentInterface{URL: "http://" + cardHost + "/v03/a2a/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC,
		ProtocolVersion: a2av0.Version}
	v03, err := a2aclient.NewFromEndpoints(h.ctx, []*a2a.AgentInterface{endpoint},
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: h.http}))
	must(err)
	plan("msg-osp-v03-001", Script{Steps: []Step{working(""),
		artifact("art-shower", "showers", dataPart(qShower), citationPart(citShower)), completed()}})
	tasks["shower"] = taskID(send(h.ctx, v03, userMessage("msg-osp-v03-001", c, "Mean shower length?")))
	getTask(h.ctx, v03, tasks["shower"])
	data, n := jsonLines(h.recorder.Take())
	write(f, data)
	frag.file(f, "jsonl", "0.3-jsonrpc", sdk+" a2acompat/a2av0 JSON-RPC client and server", n,
		"v0.3 JSON-RPC log (message/send, tasks/get) of the SDK's v0.3 compatibility layer, which drops the "+
			"citation Part's mediaType (a v0.3 DataPart has none, and the layer does not move it to metadata).")
	frag.taskCopy(tasks["shower"], c, copyOf(f, "completed", []citationSummary{summary(citShower, true, true)}, []map[string]any{qShower}, 0))
	frag.plant("citation-type-lost", "error", "task:"+tasks["shower"], f,
		"The SDK's v0.3 JSON-RPC conversion (a2av0.FromV1Part) stripped mediaType from the citation data Part.")
	storedCopy("shower", cited(citShower), []map[string]any{qShower}, 0)
}

// grpcScenario: gRPC over an in-memory listener; the messages as protojson.Marshal prints them.
func (h *harness) grpcScenario() {
	f := dir + "/grpc-protojson.jsonl"
	c := "ctx-osp-grpc"
	iface := a2a.NewAgentInterface(cardHost+":443", a2a.TransportProtocolGRPC)
	g, err := a2aclient.NewFromEndpoints(h.ctx, []*a2a.AgentInterface{iface}, a2aclient.WithTransport(a2a.TransportProtocolGRPC,
		a2aclient.TransportFactoryFn(func(_ context.Context, _ *a2a.AgentCard, _ *a2a.AgentInterface) (a2aclient.Transport, error) {
			return a2agrpc.NewGRPCTransport(h.conn), nil
		})))
	must(err)
	plan("msg-osp-grpc-001", Script{Steps: []Step{
		working("Querying ohep_homes (appliance_count)"),
		chunk("art-appliances", "appliances", false, false, textPart("Appliances per home, Wave 2"), jsonPart(qAppliances)),
		chunk("art-appliances", "", true, true, citationPart(citAppliances)),
		completed(),
	}})
	tasks["appliances"] = string(stream(h.ctx, g, userMessage("msg-osp-grpc-001", c, "Appliances per home?"))[0].(*a2a.Task).ID)
	getTask(h.ctx, g, tasks["appliances"])
	plan("msg-osp-grpc-002", Script{Steps: []Step{working(""),
		artifact("art-standby", "standby", textPart("Standby power, Wave 2"), dataPart(qStandby), citationPart(citStandby)),
		completed()}})
	tasks["standby"] = taskID(send(h.ctx, g, userMessage("msg-osp-grpc-002", c, "Standby power per home?")))
	data, n := h.protoLog.Take()
	write(f, data)
	frag.file(f, "jsonl", "1.0-grpc-protojson", sdk+" a2agrpc/v1 client and server; messages by protojson.Marshal in a client interceptor", n,
		"ProtoJSON of the gRPC messages, one a line: SendMessageRequest, each StreamResponse of SendStreamingMessage, "+
			"GetTaskRequest ({\"id\"}) and the Task it returns, then a unary SendMessage and its SendMessageResponse.")
	frag.taskCopy(tasks["appliances"], c, copyOf(f, "completed", cited(citAppliances), []map[string]any{qAppliances}, 2))
	storedCopy("appliances", cited(citAppliances), []map[string]any{qAppliances}, 2)
	frag.taskCopy(tasks["standby"], c, copyOf(f, "completed", cited(citStandby), []map[string]any{qStandby}, 1))
	storedCopy("standby", cited(citStandby), []map[string]any{qStandby}, 1)
}

// storedTasks writes what a Go service that keeps each finished task would: json.Marshal of the store's
// Get, a taskstore.StoredTask, one a line. StoredTask has no JSON tags, so its members are Go's field names.
func (h *harness) storedTasks() {
	f := dir + "/stored-tasks.jsonl"
	var values []any
	for _, name := range []string{"heating", "tariff"} {
		got, err := h.store.Get(h.ctx, a2a.TaskID(tasks[name]))
		must(err)
		values = append(values, got)
		c := stored[name]
		c.Path = f
		frag.taskCopy(tasks[name], got.Task.ContextID, c)
	}
	data, n := objectLines(values)
	write(f, data)
	frag.file(f, "jsonl", "1.0-go-stored-task", sdk+" taskstore.InMemory Get, each StoredTask written with json.Marshal", n,
		"A Go service's own record of finished tasks: {\"Task\":{...},\"Version\":N,\"User\":\"analyst\"} a line (the SDK's "+
			"StoredTask has no JSON tags).")
}

// storeDump saves the in-memory task store as its user would: every task (ListTasks with artifacts) by json.Marshal.
func (h *harness) storeDump() {
	f := dir + "/task-store.json"
	list, err := h.store.List(h.ctx, &a2a.ListTasksRequest{IncludeArtifacts: true})
	must(err)
	data, err := json.MarshalIndent(list.Tasks, "", "  ")
	must(err)
	write(f, append(data, '\n'))
	frag.file(f, "json", "1.0-go-store", sdk+" taskstore.InMemory, saved with json.Marshal of its tasks", 1,
		"The SDK keeps tasks only in memory (taskstore.InMemory); this is its List(IncludeArtifacts) saved with "+
			"json.MarshalIndent: a JSON array of v1.0 Tasks.")
	for _, name := range []string{"heating", "solar", "tariff", "ev", "insulation", "shower", "appliances", "standby"} {
		frag.taskCopy(tasks[name], string(contextOf(list.Tasks, tasks[name])), stored[name])
	}
}

func contextOf(ts []*a2a.Task, id string) string {
	for _, t := range ts {
		if string(t.ID) == id {
			return t.ContextID
		}
	}
	panic("task " + id + " is not in the store")
}

func splitLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}
