// Command make_samples_go writes the samples made by the official Go A2A SDK
// (github.com/a2aproject/a2a-go/v2 v2.4.0, pinned by go.sum) into sample_transcripts/go-osprey-energy/,
// and the manifest fragment go.json (merged by merge_manifest.py).
//
// Server: the SDK's a2asrv.NewHandler around a scripted AgentExecutor and its in-memory task store,
// served as JSON-RPC and HTTP+JSON REST (a2asrv), as v0.3 JSON-RPC (a2acompat/a2av0) on an httptest
// server on 127.0.0.1, and as gRPC (a2agrpc/v1) on an in-memory bufconn listener (no address at all).
// Clients: the SDK's a2aclient with its JSON-RPC, REST, v0.3 JSON-RPC and gRPC transports. The HTTP
// clients' RoundTripper keeps the exact bytes of every request and response; a gRPC client interceptor
// keeps each message as protojson.Marshal prints it; the SDK's logging interceptors write through a slog
// JSON handler; what the clients returned is written with json.Marshal, one value a line; and the task
// store, which the SDK keeps only in memory, is saved as a user would: json.Marshal of its tasks (and of
// the StoredTask its Get returns).
//
// Determinism: message, context and artifact ids and status timestamps are the scripts'; the task ids
// the SDK draws (uuid v7) and its JSON-RPC, SSE and log ids (uuid v4) come from a seeded reader and a
// stopped clock (determinism.go). Re-runs write byte-identical files. Nothing here reads the files back.
//
// Usage (regenerate.sh): go run . [-out sample_transcripts] ; SAMPLES_OUT and SAMPLES_FRAGMENTS as in
// common.py.
package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

const (
	dir    = "go-osprey-energy"
	sdk    = "a2a-go v2.4.0"
	user   = "analyst" // the in-memory store keeps each task's owner; ListTasks needs one
	grpcUp = "passthrough:///" + cardHost
)

var (
	outDir  string
	frag    = newFragment()
	scripts = map[string]Script{}
)

// switchable is the slog JSON handler's writer: the SDK's log lines are kept while on.
type switchable struct {
	mu  sync.Mutex
	on  bool
	buf []byte
}

func (s *switchable) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.buf = append(s.buf, p...)
	}
	return len(p), nil
}

type harness struct {
	ctx      context.Context
	recorder *Recorder
	http     *http.Client
	protoLog *ProtoLog
	logs     *switchable
	logger   *slog.Logger
	store    *taskstore.InMemory
	conn     *grpc.ClientConn
}

func main() {
	flag.StringVar(&outDir, "out", envOr("SAMPLES_OUT", filepath.Join("..", "..")), "the sample_transcripts folder")
	flag.Parse()
	fixIDs(27)
	must(os.RemoveAll(filepath.Join(outDir, dir)))
	h := start()
	defer h.conn.Close()

	h.cardFile()
	objects := h.rpcScenarios()
	objects = append(objects, h.restScenarios()...)
	h.clientObjects(objects)
	h.compatScenario()
	h.grpcScenario()
	h.storedTasks()
	h.storeDump()
	frag.write(envOr("SAMPLES_FRAGMENTS", "/tmp/sample-transcripts-fragments"))
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// start runs the SDK's server (one request handler, every binding) and makes the clients' plumbing.
func start() *harness {
	logs := &switchable{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{ReplaceAttr: fixedLogTimes}))
	store := taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{
		Authenticator: func(context.Context) (string, error) { return user, nil },
		TimeProvider:  func() time.Time { return Clock },
	})
	handler := a2asrv.NewHandler(&Executor{scripts}, a2asrv.WithTaskStore(store), a2asrv.WithLogger(logger),
		a2asrv.WithCallInterceptors(a2asrv.NewLoggingInterceptor(&a2asrv.LoggingConfig{LogPayload: true})))

	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card()))
	mux.Handle("/a2a/jsonrpc", a2asrv.NewJSONRPCHandler(handler))
	mux.Handle("/a2a/rest/", http.StripPrefix("/a2a/rest", a2asrv.NewRESTHandler(handler)))
	mux.Handle("/v03/a2a/jsonrpc", a2av0.NewJSONRPCHandler(handler))
	server := httptest.NewServer(mux) // 127.0.0.1, an ephemeral port
	target, err := url.Parse(server.URL)
	must(err)

	listener := bufconn.Listen(1 << 20)
	grpcServer := grpc.NewServer()
	a2agrpc.NewHandler(handler).RegisterWith(grpcServer)
	go grpcServer.Serve(listener)
	protoLog := &ProtoLog{}
	conn, err := grpc.NewClient(grpcUp,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return listener.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(protoLog.Unary), grpc.WithStreamInterceptor(protoLog.Stream))
	must(err)

	recorder := &Recorder{Host: cardHost, Target: target}
	return &harness{
		ctx: context.Background(), recorder: recorder, http: &http.Client{Transport: recorder},
		protoLog: protoLog, logs: logs, logger: logger, store: store, conn: conn,
	}
}

func plan(messageID string, s Script) { scripts[messageID] = s }

func (h *harness) client(binding a2a.TransportProtocol, options ...a2aclient.FactoryOption) *a2aclient.Client {
	options = append(options, a2aclient.WithJSONRPCTransport(h.http), a2aclient.WithRESTTransport(h.http),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
	c, err := a2aclient.NewFromCard(h.ctx, card(), options...)
	must(err)
	return c
}

func send(ctx context.Context, c *a2aclient.Client, m *a2a.Message) a2a.SendMessageResult {
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
	must(err)
	return res
}

func stream(ctx context.Context, c *a2aclient.Client, m *a2a.Message) []any {
	var events []any
	for event, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: m}) {
		must(err)
		events = append(events, event)
	}
	return events
}

func taskID(res a2a.SendMessageResult) string { return string(res.(*a2a.Task).ID) }

func getTask(ctx context.Context, c *a2aclient.Client, id string) *a2a.Task {
	t, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
	must(err)
	return t
}

func cited(c map[string]any) []citationSummary { return []citationSummary{summary(c, true, false)} }

var (
	// ids of the tasks the SDK names, for the store dump's copies
	tasks = map[string]string{}
	// the copies every task also has in the store dump: (citations, payloads, text parts there)
	stored = map[string]copyEntry{}
)

// cardFile: the card as a 1.0 client is served it.
func (h *harness) cardFile() {
	req, err := http.NewRequest("GET", "http://"+cardHost+a2asrv.WellKnownAgentCardPath, nil)
	must(err)
	res, err := h.http.Do(req)
	must(err)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	path := dir + "/agent-card.json"
	write(path, h.recorder.Take()[0].Response)
	frag.Agents = append(frag.Agents, agentEntry{agentName, path, true, true})
}
