package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
)

// The manifest fragment `go.json`, merged into sample_transcripts/manifest.json by merge_manifest.py.
// It is written from the scenarios, never from the files: the same fields, in the same order, as
// common.py's Fragment.

type fileEntry struct {
	Path        string   `json:"path"`
	Container   string   `json:"container"`
	Gzip        bool     `json:"gzip"`
	Dialects    []string `json:"dialects"`
	MadeBy      string   `json:"made_by"`
	Records     int      `json:"records"`
	Description string   `json:"description"`
}

type agentEntry struct {
	Name              string `json:"name"`
	Card              string `json:"card"`
	DeclaresExtension bool   `json:"declares_extension"`
	ListsMediaType    bool   `json:"lists_media_type"`
}

type citationSummary struct {
	Study    string `json:"study"`
	Period   string `json:"period"`
	Column   string `json:"column"`
	Table    string `json:"table"`
	Function string `json:"function"`
	BaseN    int    `json:"base_n"`
	Valid    bool   `json:"valid"`
	Inferred bool   `json:"inferred"`
}

type copyEntry struct {
	Path      string            `json:"path"`
	State     *string           `json:"state"`
	Terminal  bool              `json:"terminal"`
	Citations []citationSummary `json:"citations"`
	Claims    int               `json:"claims"`
	DataParts int               `json:"data_parts"`
	TextParts int               `json:"text_parts"`
}

type resultEntry struct {
	Key       string      `json:"key"`
	TaskID    *string     `json:"task_id"`
	ContextID *string     `json:"context_id"`
	MessageID string      `json:"message_id,omitempty"`
	Agent     string      `json:"agent"`
	Copies    []copyEntry `json:"copies"`
}

type plantedEntry struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Key      string `json:"key"`
	Path     string `json:"path"`
	What     string `json:"what"`
}

type errorEntry struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

type Fragment struct {
	Files          []fileEntry    `json:"files"`
	Agents         []agentEntry   `json:"agents"`
	Results        []*resultEntry `json:"results"`
	ErrorResponses []errorEntry   `json:"error_responses"`
	Planted        []plantedEntry `json:"planted"`
	byKey          map[string]*resultEntry
}

func newFragment() *Fragment {
	return &Fragment{Files: []fileEntry{}, Agents: []agentEntry{}, Results: []*resultEntry{},
		ErrorResponses: []errorEntry{}, Planted: []plantedEntry{}, byKey: map[string]*resultEntry{}}
}

func (f *Fragment) file(path, container, dialect, madeBy string, records int, description string) {
	f.Files = append(f.Files, fileEntry{path, container, false, []string{dialect}, madeBy, records, description})
}

// taskCopy adds a stored copy of the task's result found in path.
func (f *Fragment) taskCopy(taskID, contextID string, c copyEntry) {
	f.addCopy("task:"+taskID, &taskID, &contextID, "", c)
}

// messageCopy adds a stored copy of a bare agent Message (a result with no task).
func (f *Fragment) messageCopy(messageID, contextID string, c copyEntry) {
	f.addCopy("message:"+messageID, nil, &contextID, messageID, c)
}

func (f *Fragment) addCopy(key string, taskID, contextID *string, messageID string, c copyEntry) {
	r, ok := f.byKey[key]
	if !ok {
		r = &resultEntry{Key: key, TaskID: taskID, ContextID: contextID, MessageID: messageID, Agent: agentName, Copies: []copyEntry{}}
		f.byKey[key] = r
		f.Results = append(f.Results, r)
	}
	r.Copies = append(r.Copies, c)
}

func (f *Fragment) plant(rule, severity, key, path, what string) {
	f.Planted = append(f.Planted, plantedEntry{rule, severity, key, path, what})
}

func (f *Fragment) write(dir string) {
	must(os.MkdirAll(dir, 0o755))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	must(enc.Encode(f))
	must(os.WriteFile(filepath.Join(dir, "go.json"), buf.Bytes(), 0o644))
}

// copyOf describes one stored copy: its state, the citations it holds and its distinct data payloads.
func copyOf(path, state string, citations []citationSummary, payloads []map[string]any, textParts int) copyEntry {
	claims := 0
	for _, p := range payloads {
		claims += numericLeaves(p)
	}
	if citations == nil {
		citations = []citationSummary{}
	}
	var st *string
	if state != "" {
		st = &state
	}
	return copyEntry{path, st, true, citations, claims, len(payloads), textParts}
}

func numericLeaves(v any) int {
	switch x := v.(type) {
	case int, float64:
		return 1
	case map[string]any:
		n := 0
		for _, e := range x {
			n += numericLeaves(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += numericLeaves(e)
		}
		return n
	}
	return 0
}
