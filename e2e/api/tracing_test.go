package api

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// otlpReceiver is an OTLP/HTTP traces endpoint in the test: it decodes
// the protobuf export requests the server posts and keeps their spans.
type otlpReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("OTLP request %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			t.Errorf("OTLP body does not decode: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			rc.services = append(rc.services, attr(rs.GetResource().GetAttributes(), "service.name"))
			for _, ss := range rs.GetScopeSpans() {
				rc.spans = append(rc.spans, ss.GetSpans()...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *otlpReceiver) received() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...)
}

func attr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// A traced run: the request that queued it, the run's execution, its
// model calls and its tool call reach an OTLP receiver, each span with the
// run id; the model and tool spans are children of the run's span, and the
// run's span links to the request that queued it.
func TestTracesOfARun(t *testing.T) {
	t.Parallel()
	rc := newOTLPReceiver(t)
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("list_dir", `{}`)),
		e2etest.Turn(e2etest.Text("done")),
	), e2etest.WithTracesEndpoint(rc.URL+"/v1/traces"))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "go")
	st.Until(t, "run.done", e2etest.IsDone(r.ID))
	st.Close()
	queued := e2etest.Payload[event.RunQueuedPayload](t, s.Journal(t, r.ID)[0])
	s.Stop() // exports what is still buffered

	spans := rc.received()
	byName := map[string][]*tracepb.Span{}
	for _, sp := range spans {
		byName[sp.GetName()] = append(byName[sp.GetName()], sp)
	}
	post := byName["POST /api/sessions/{id}/messages"]
	runs := byName["run"]
	chats := byName["chat demo"]
	tools := byName["execute_tool list_dir"]
	if len(post) != 1 || len(runs) != 1 || len(chats) != 2 || len(tools) != 1 {
		var names []string
		for n, ss := range byName {
			names = append(names, fmt.Sprintf("%s ×%d", n, len(ss)))
		}
		t.Fatalf("spans received: %s", strings.Join(names, ", "))
	}
	run := runs[0]
	for _, sp := range []*tracepb.Span{post[0], run, chats[0], chats[1], tools[0]} {
		if got := attr(sp.GetAttributes(), "caduceus.run_id"); got != r.ID {
			t.Errorf("span %q: caduceus.run_id %q, want %s", sp.GetName(), got, r.ID)
		}
	}
	for _, sp := range []*tracepb.Span{chats[0], chats[1], tools[0]} {
		if !bytes.Equal(sp.GetTraceId(), run.GetTraceId()) || !bytes.Equal(sp.GetParentSpanId(), run.GetSpanId()) {
			t.Errorf("span %q is not a child of the run's span", sp.GetName())
		}
	}
	if post[0].GetKind() != tracepb.Span_SPAN_KIND_SERVER || attr(post[0].GetAttributes(), "http.route") != "/api/sessions/{id}/messages" {
		t.Errorf("request span: kind %v, attributes %v", post[0].GetKind(), post[0].GetAttributes())
	}
	links := run.GetLinks()
	if len(links) != 1 || !bytes.Equal(links[0].GetSpanId(), post[0].GetSpanId()) || !bytes.Equal(links[0].GetTraceId(), post[0].GetTraceId()) {
		t.Errorf("run span links %v, want the request span %s", links, hex.EncodeToString(post[0].GetSpanId()))
	}
	if attr(chats[0].GetAttributes(), "gen_ai.provider.name") != "demo" || attr(tools[0].GetAttributes(), "gen_ai.tool.name") != "list_dir" {
		t.Errorf("model span %v, tool span %v", chats[0].GetAttributes(), tools[0].GetAttributes())
	}
	if rc.services[0] != "caduceus" {
		t.Errorf("service.name %q", rc.services[0])
	}
	// The traceparent the run links with is in its run.queued event.
	if !strings.Contains(queued.TraceParent, hex.EncodeToString(post[0].GetSpanId())) {
		t.Errorf("run.queued traceparent %q", queued.TraceParent)
	}
}
