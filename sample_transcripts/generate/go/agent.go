package main

import (
	"context"
	"fmt"
	"iter"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

const (
	agentName = "Osprey Energy Agent"
	citMT     = "application/vnd.upperhand.citations+json"
	extURI    = "https://standards.upperhandai.com/ext/citations/v1"
	cardHost  = "osprey.test" // the card's host; the client's RoundTripper sends it to 127.0.0.1
	study     = "Osprey Household Energy Panel"
	wave2     = "Wave 2 (June 2026)"
	homes     = "Households, Bristol and Bath"
)

// citation is a Citations v1 payload of the panel (its data layer is not in the samples).
func citation(baseName string, n int, column, function string, warnings ...string) map[string]any {
	c := map[string]any{
		"study":   study,
		"period":  wave2,
		"fielded": "2026-06-01/2026-06-26",
		"base":    map[string]any{"name": baseName, "n": n},
		"weight":  "household_weight",
		"source":  map[string]any{"table": "ohep_homes", "column": column, "function": function},
	}
	if len(warnings) > 0 {
		w := make([]any, len(warnings))
		for i, s := range warnings {
			w[i] = s
		}
		c["warnings"] = w
	}
	return c
}

func summary(c map[string]any, valid, inferred bool) citationSummary {
	base, source := c["base"].(map[string]any), c["source"].(map[string]any)
	return citationSummary{c["study"].(string), c["period"].(string), source["column"].(string),
		source["table"].(string), source["function"].(string), base["n"].(int), valid, inferred}
}

func share(key, name string, value float64) map[string]any {
	return map[string]any{key: name, "share": value}
}

var (
	citHeating    = citation(homes, 1840, "heating_main", "extractShare")
	citTariff     = citation(homes, 1840, "tariff_type", "extractShare", "Prepayment meters under-sampled")
	citEVZero     = citation("EV-owning households, new estates", 0, "ev_kwh", "extractMean")
	citInsulation = citation("Owner-occupied homes", 1122, "loft_mm", "extractMean")
	citHeatPump   = citation("Homes with a heat pump", 96, "hp_cop", "extractMean")
	citShower     = citation(homes, 1840, "shower_min", "extractMean")
	citAppliances = citation(homes, 1840, "appliance_count", "extractMean")
	citStandby    = citation(homes, 1840, "standby_w", "extractMean")

	qHeating = map[string]any{"fuels": []any{share("name", "gas", 0.64), share("name", "electric", 0.21),
		share("name", "heat_pump", 0.09), share("name", "oil", 0.06)}, "total": 1840}
	qSolar = map[string]any{"metric": "solar_share", "waves": []any{
		map[string]any{"wave": "W1", "value": 0.11}, map[string]any{"wave": "W2", "value": 0.13}}}
	qTariff = map[string]any{"tariffs": []any{share("type", "fixed", 0.47), share("type", "variable", 0.38),
		share("type", "prepayment", 0.15)}, "total": 1840}
	qEV         = map[string]any{"mean_kwh_per_week": 38.5, "total": 0}
	qInsulation = map[string]any{"mean_loft_mm": 212.5, "total": 1122}
	qHeatPump   = map[string]any{"mean_cop": 3.1, "total": 96}
	qShower     = map[string]any{"mean_shower_minutes": 7.4, "total": 1840}
	qAppliances = map[string]any{"mean_appliances": 11.2, "total": 1840}
	qStandby    = map[string]any{"mean_standby_watts": 31.5, "total": 1840}
)

func textPart(s string) *a2a.Part         { return a2a.NewTextPart(s) }
func dataPart(v map[string]any) *a2a.Part { return a2a.NewDataPart(v) }
func citationPart(c map[string]any) *a2a.Part {
	return &a2a.Part{Content: a2a.Data{Value: c}, MediaType: citMT}
}
func jsonPart(v map[string]any) *a2a.Part {
	return &a2a.Part{Content: a2a.Data{Value: v}, MediaType: "application/json"}
}
func parts(p ...*a2a.Part) []*a2a.Part { return p }
func userMessage(id, contextID, text string) *a2a.Message {
	return &a2a.Message{ID: id, ContextID: contextID, Role: a2a.MessageRoleUser, Parts: parts(textPart(text))}
}

// Step is one thing the scripted agent does in a task.
type Step struct {
	State     a2a.TaskState // a status update, with Parts as its agent message when there are any
	Artifact  a2a.ArtifactID
	Name      string
	Append    bool
	LastChunk bool
	Parts     []*a2a.Part
}

func working(text string) Step {
	if text == "" {
		return Step{State: a2a.TaskStateWorking}
	}
	return Step{State: a2a.TaskStateWorking, Parts: parts(textPart(text))}
}
func completed(p ...*a2a.Part) Step { return Step{State: a2a.TaskStateCompleted, Parts: p} }
func artifact(id, name string, p ...*a2a.Part) Step {
	return Step{Artifact: a2a.ArtifactID(id), Name: name, LastChunk: true, Parts: p}
}
func chunk(id, name string, appendTo, last bool, p ...*a2a.Part) Step {
	return Step{Artifact: a2a.ArtifactID(id), Name: name, Append: appendTo, LastChunk: last, Parts: p}
}

// Script is what the agent answers one user message (by its id) with: a task's steps, or a bare Message.
type Script struct {
	Steps   []Step
	ReplyID string // a bare agent Message with this id and Reply as its parts
	Reply   []*a2a.Part
}

// Executor is the scripted a2asrv.AgentExecutor: every status is stamped from the stopped clock and every
// message and artifact id is the script's, so nothing but the task id is left to the SDK.
type Executor struct{ scripts map[string]Script }

func (e *Executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		sc, ok := e.scripts[ec.Message.ID]
		if !ok {
			yield(nil, fmt.Errorf("no script for message %q", ec.Message.ID))
			return
		}
		if sc.ReplyID != "" {
			yield(&a2a.Message{ID: sc.ReplyID, ContextID: ec.ContextID, Role: a2a.MessageRoleAgent, Parts: sc.Reply}, nil)
			return
		}
		task := &a2a.Task{ID: ec.TaskID, ContextID: ec.ContextID, History: []*a2a.Message{ec.Message},
			Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: at(0)}}
		if !yield(task, nil) {
			return
		}
		n := 0
		for _, s := range sc.Steps {
			if !yield(e.event(ec, s, &n), nil) {
				return
			}
		}
	}
}

func (e *Executor) event(ec *a2asrv.ExecutorContext, s Step, n *int) a2a.Event {
	if s.Artifact != "" {
		return &a2a.TaskArtifactUpdateEvent{TaskID: ec.TaskID, ContextID: ec.ContextID, Append: s.Append, LastChunk: s.LastChunk,
			Artifact: &a2a.Artifact{ID: s.Artifact, Name: s.Name, Parts: s.Parts}}
	}
	status := a2a.TaskStatus{State: s.State, Timestamp: at(1)}
	if s.State == a2a.TaskStateCompleted {
		status.Timestamp = at(3)
	}
	if len(s.Parts) > 0 {
		*n++
		status.Message = &a2a.Message{ID: fmt.Sprintf("%s-agent-msg-%d", ec.TaskID, *n), ContextID: ec.ContextID,
			TaskID: ec.TaskID, Role: a2a.MessageRoleAgent, Parts: s.Parts}
	}
	return &a2a.TaskStatusUpdateEvent{TaskID: ec.TaskID, ContextID: ec.ContextID, Status: status}
}

func (e *Executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, fmt.Errorf("not cancelable")) }
}

func card() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        agentName,
		Description: "Household energy answers from the Osprey Household Energy Panel, with re-runnable citations.",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface("http://"+cardHost+"/a2a/jsonrpc", a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface("http://"+cardHost+"/a2a/rest", a2a.TransportProtocolHTTPJSON),
			a2a.NewAgentInterface(cardHost+":443", a2a.TransportProtocolGRPC),
		},
		Provider: &a2a.AgentProvider{Org: "Upperhand Research Ops", URL: "https://upperhand.example"},
		Version:  "1.4.0",
		Capabilities: a2a.AgentCapabilities{Streaming: true, Extensions: []a2a.AgentExtension{{
			URI: extURI, Description: "Citations v1: every quantitative answer carries a citation data Part"}}},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json", citMT},
		Skills: []a2a.AgentSkill{{
			ID: "energy-quant", Name: "Household energy figures",
			Description: "Heating fuels, tariffs and consumption with a re-runnable citation.",
			Tags:        []string{"survey", "energy"}, Examples: []string{"Which fuel heats most homes?"},
			InputModes: []string{"text/plain"}, OutputModes: []string{"application/json", citMT},
		}},
	}
}
