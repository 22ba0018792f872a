package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Exchange is one HTTP call as the client's RoundTripper saw it: the exact bytes both ways.
type Exchange struct {
	Method, URL string
	Status      int
	Request     []byte
	Response    []byte
}

// Recorder is the client's http.RoundTripper: it sends the card's host (Host) to the test server
// (Target, on 127.0.0.1) and keeps each request and response body byte for byte.
type Recorder struct {
	Host      string
	Target    *url.URL
	exchanges []Exchange
}

func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	out := req.Clone(req.Context())
	if out.URL.Host == r.Host {
		out.URL.Scheme, out.URL.Host = r.Target.Scheme, r.Target.Host
		out.Host = ""
	}
	res, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(data))
	r.exchanges = append(r.exchanges, Exchange{req.Method, req.URL.String(), res.StatusCode, body, data})
	return res, nil
}

// Take hands over the exchanges recorded since the last call.
func (r *Recorder) Take() []Exchange {
	out := r.exchanges
	r.exchanges = nil
	return out
}

// jsonLines is a JSON-RPC log: each request body, then its response body, one a line.
func jsonLines(exchanges []Exchange) ([]byte, int) {
	var buf bytes.Buffer
	n := 0
	for _, e := range exchanges {
		for _, body := range [][]byte{e.Request, e.Response} {
			buf.Write(bytes.TrimSpace(body))
			buf.WriteByte('\n')
			n++
		}
	}
	return buf.Bytes(), n
}

// objectLines writes values as a Go service logs what its client returned: json.Marshal, one a line.
func objectLines(values []any) ([]byte, int) {
	var buf bytes.Buffer
	for _, v := range values {
		line, err := json.Marshal(v)
		must(err)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), len(values)
}

func sseEvents(body []byte) int {
	n := 0
	for _, block := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n\n") {
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, "data:") {
				n++
				break
			}
		}
	}
	return n
}

// ProtoLog keeps each gRPC message a client interceptor sees, as protojson.Marshal prints it.
// protojson varies its whitespace from build to build on purpose, so each line is compacted.
type ProtoLog struct{ lines [][]byte }

func (p *ProtoLog) add(m any) {
	msg, ok := m.(proto.Message)
	if !ok {
		return
	}
	data, err := protojson.Marshal(msg)
	must(err)
	var compact bytes.Buffer
	must(json.Compact(&compact, data))
	p.lines = append(p.lines, compact.Bytes())
}

func (p *ProtoLog) Unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	p.add(req)
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil {
		p.add(reply)
	}
	return err
}

func (p *ProtoLog) Stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return &loggedStream{ClientStream: s, log: p}, nil
}

type loggedStream struct {
	grpc.ClientStream
	log *ProtoLog
}

func (s *loggedStream) SendMsg(m any) error {
	s.log.add(m)
	return s.ClientStream.SendMsg(m)
}

func (s *loggedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil {
		s.log.add(m)
	}
	return err
}

func (p *ProtoLog) Take() ([]byte, int) {
	out := append(bytes.Join(p.lines, []byte("\n")), '\n')
	n := len(p.lines)
	p.lines = nil
	return out, n
}

func write(rel string, data []byte) {
	path := filepath.Join(outDir, rel)
	must(os.MkdirAll(filepath.Dir(path), 0o755))
	must(os.WriteFile(path, data, 0o644))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
